#include "cli/instance_view.h"

#include <algorithm>
#include <iostream>
#include <map>

namespace allot::cli {
namespace {

using nlohmann::json;

// The states of work not yet over: what `allot ps` shows unless asked for history.
constexpr const char* kActiveStates[] = {"queued", "scheduled", "starting", "running"};

const std::vector<Column> kInstanceColumns = {{"id", "id"},
                                              {"state", "state"},
                                              {"tenant", "tenant_name"},
                                              {"node", "node_name"},
                                              {"gpus", "gpu_summary"},
                                              {"command", "command_line"},
                                              {"created", "created_at"},
                                              {"reason", "reason"}};

// Names by id from a listing the key may read; empty when it may not (only operator admins list
// nodes), and the ids then stand in for the names.
std::map<std::string, std::string> names_by_id(Session& session, const std::string& target) {
  std::map<std::string, std::string> names;
  json items;
  if (!session.lookup(target, items)) return names;
  for (const json& item : items) names[item.value("id", "")] = item.value("name", "");
  return names;
}

std::string name_or_id(const std::map<std::string, std::string>& names, const std::string& id) {
  auto it = names.find(id);
  return it == names.end() || it->second.empty() ? id : it->second;
}

}  // namespace

json summarise_instances(json items) {
  for (json& instance : items) {
    const json& spec = instance["spec"];
    const int gpus = spec.value("gpus", 0);
    instance["gpu_summary"] =
        gpus > 0 ? std::to_string(gpus) : std::to_string(spec.value("gpu_milli", 0)) + "m";
    std::string line;
    for (const json& arg : spec["command"])
      line += (line.empty() ? "" : " ") + arg.get<std::string>();
    instance["command_line"] = line.size() > 40 ? line.substr(0, 37) + "..." : line;
    // Told to stop and not yet ended: in its grace, it is stopping, not running.
    if (instance.value("stop_requested", false) && !instance["ended_at"].is_string()) {
      instance["state"] = "stopping";
    }
  }
  return items;
}

void show_launched(Session& session, const json& instance) {
  if (session.json_output()) {
    session.show(instance);
    return;
  }
  std::vector<std::pair<std::string, std::string>> lines = {{"ID", instance.value("id", "")},
                                                            {"STATE", instance.value("state", "")}};
  const json spec = instance.value("spec", json::object());
  for (const auto& [title, field] : {std::pair{"TEMPLATE", "from_template"}, {"IMAGE", "image"}}) {
    const std::string value = spec.value(field, "");
    if (!value.empty()) lines.emplace_back(title, value);
  }
  const std::string node_id = instance.value("node_id", "");
  if (!node_id.empty()) {
    // Only operator admins may read nodes; others see the node's id.
    json node;
    const bool named = session.try_call("GET", "/v1/nodes/" + node_id, nullptr, node) == kOk;
    lines.emplace_back("NODE", named ? node.value("name", node_id) : node_id);
  } else if (!instance.value("reason", "").empty()) {
    lines.emplace_back("REASON", instance.value("reason", ""));
  }
  if (instance.contains("members")) {
    std::string members;
    for (const json& id : instance["members"]) {
      members += (members.empty() ? "" : " ") + id.get<std::string>();
    }
    lines.emplace_back("MEMBERS", members);
  }
  size_t width = 0;
  for (const auto& [label, text] : lines) width = std::max(width, label.size());
  for (const auto& [label, text] : lines) {
    std::cout << label << ":" << std::string(width - label.size() + 1, ' ') << text << "\n";
  }
}

int list_instances(Session& session, const PsOptions& options) {
  json items = json::array();
  std::vector<std::string> targets;
  if (!options.state.empty()) {
    targets.push_back("/v1/instances?state=" + options.state);
  } else if (options.all) {
    targets.emplace_back("/v1/instances");
  } else {
    // One listing per active state: the ended instances, however many, are never read.
    for (const char* state : kActiveStates) {
      targets.push_back(std::string("/v1/instances?state=") + state);
    }
  }
  for (const std::string& target : targets) {
    json page;
    if (const int code = session.list(target, 0, page); code != kOk) return code;
    for (json& item : page) items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(), [](const json& a, const json& b) {
    const auto key = [](const json& i) {
      return std::make_pair(i.value("created_at_ms", int64_t{0}), i.value("id", ""));
    };
    return key(a) > key(b);
  });
  if (options.limit > 0 && static_cast<int>(items.size()) > options.limit) {
    items.erase(items.begin() + options.limit, items.end());
  }
  if (!session.json_output()) {  // JSON is the API's answer as it came.
    items = summarise_instances(std::move(items));
    const auto nodes = names_by_id(session, "/v1/nodes");
    const auto tenants = names_by_id(session, "/v1/tenants");
    for (json& item : items) {
      const std::string node = item.value("node_id", "");
      item["node_name"] = node.empty() ? "" : name_or_id(nodes, node);
      item["tenant_name"] = name_or_id(tenants, item.value("tenant_id", ""));
    }
  }
  session.show_list(items, kInstanceColumns);
  return kOk;
}

}  // namespace allot::cli
