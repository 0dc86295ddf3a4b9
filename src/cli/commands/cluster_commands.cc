// nodes, node, join-tokens, run, ps, logs, stop, describe.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/instance_view.h"
#include "common/clock.h"
#include "common/random.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kNodeColumns = {{"id", "id"},
                                          {"name", "name"},
                                          {"state", "state"},
                                          {"region", "region"},
                                          {"gpus", "gpu_summary"},
                                          {"free", "free_milli", Unit::kThousandths},
                                          {"down", "unhealthy_gpus"},
                                          {"backend", "backend"},
                                          {"runtime", "runtime"},
                                          {"heartbeat", "last_heartbeat_at"}};
const std::vector<Column> kTokenColumns = {{"id", "id"},
                                           {"name", "name"},
                                           {"created", "created_at"},
                                           {"expires", "expires_at"},
                                           {"revoked", "revoked_at"}};

const std::vector<Column> kTemplateColumns = {{"name", "name"},
                                              {"gpus", "gpu_summary"},
                                              {"image", "image"},
                                              {"command", "command_summary"},
                                              {"description", "description"}};

// A template's fields that a table shows in short: its GPU request, image and command.
json summarise_templates(json items) {
  for (json& item : items) {
    const json& fields = item["fields"];
    std::string gpus = "1";
    if (fields.contains("gpu_milli")) gpus = fields["gpu_milli"].dump() + " milli";
    if (fields.contains("gpus")) gpus = fields["gpus"].dump();
    item["gpu_summary"] = gpus;
    item["image"] = fields.value("image", "(default)");
    std::string command;
    for (const json& word : fields.value("command", json::array())) {
      command += (command.empty() ? "" : " ") + word.get<std::string>();
    }
    item["command_summary"] = command.empty() ? "(the launch's)" : command;
  }
  return items;
}

// Adds the short columns that tables show and JSON leaves out: how many GPUs of which model, how
// much of them is free to place work on (healthy and not allocated, on a node that takes work), and
// how many are out of service.
json summarise_nodes(json items) {
  for (json& node : items) {
    const bool takes_work = node.value("state", "") == "ready";
    int64_t free_milli = 0;
    int unhealthy = 0;
    std::string model;
    for (const json& gpu : node["gpus"]) {
      if (!gpu.value("healthy", false)) {
        ++unhealthy;
      } else if (takes_work) {
        free_milli += std::max<int64_t>(0, 1000 - gpu.value("used_milli", int64_t{0}));
      }
      model = gpu.value("model", "");
    }
    node["gpu_summary"] = std::to_string(node["gpus"].size()) + (model.empty() ? "" : " " + model);
    node["free_milli"] = free_milli;
    node["unhealthy_gpus"] = unhealthy;
  }
  return items;
}

Action list_of(std::string target, const int& limit, const std::vector<Column>& columns,
               json (*summarise)(json)) {
  return [target = std::move(target), &limit, &columns, summarise](Session& session) {
    json items;
    const int code = session.list(target, limit, items);
    if (code != kOk) return code;
    // JSON is the API's answer as it came; only a table shows the short columns.
    session.show_list(summarise != nullptr && !session.json_output() ? summarise(items) : items,
                      columns);
    return code;
  };
}

struct RunOptions {
  PlacementOptions placement;
  std::vector<std::string> env, labels, command, volumes, ports;
  std::string project, region, image, idle_stop, template_name, idempotency_key;
  int64_t cpu_milli = 0, memory_mib = 0, max_run_s = 0;
  bool interactive = false;
  bool requeue = false;
  bool public_ports = false;
  int nodes = 1;
};

// NAME:/PATH[:ro|:rw] flags into the API's mounts; false (with a message) on a malformed one.
bool volume_mounts(const std::vector<std::string>& items, json& out) {
  out = json::array();
  for (const std::string& item : items) {
    const size_t colon = item.find(':');
    std::string path = colon == std::string::npos ? "" : item.substr(colon + 1);
    bool read_only = false;
    for (const auto& [suffix, ro] : {std::pair{":ro", true}, std::pair{":rw", false}}) {
      if (path.ends_with(suffix)) {
        path.resize(path.size() - 3);
        read_only = ro;
        break;
      }
    }
    if (colon == std::string::npos || colon == 0 || path.empty()) {
      std::cerr << "error: --volume takes NAME:/PATH[:ro], not '" << item << "'\n";
      return false;
    }
    out.push_back({{"volume", item.substr(0, colon)}, {"path", path}, {"read_only", read_only}});
  }
  return true;
}

// PORT[:http|:https] flags into the API's ports, each public with --public; false (with a
// message) on a malformed one. The server checks the range.
bool published_ports(const std::vector<std::string>& items, bool is_public, json& out) {
  out = json::array();
  for (const std::string& item : items) {
    const size_t colon = item.find(':');
    const std::string number = item.substr(0, colon);
    const std::string protocol = colon == std::string::npos ? "http" : item.substr(colon + 1);
    int64_t port = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), port);
    if (number.empty() || ec != std::errc{} || end != number.data() + number.size() ||
        (protocol != "http" && protocol != "https")) {
      std::cerr << "error: --port takes PORT[:http|:https], not '" << item << "'\n";
      return false;
    }
    out.push_back({{"port", port}, {"protocol", protocol}, {"public", is_public}});
  }
  return true;
}

// The server's reason, and for a request without a project (the key's tenant has none, as the
// operator's has not, or several) the flag that names one.
void report_launch_refusal(const Session& session, const json& answer) {
  session.report(answer);
  const json& error = answer.is_object() ? answer.value("error", json::object()) : json::object();
  if (error.value("code", "") == "missing_field" &&
      error.value("message", "").find("'project_id'") != std::string::npos) {
    std::cerr << "hint: pass --project PROJECT_ID (allot projects list shows them)\n";
  }
}

int run_instance(Session& session, const RunOptions& o) {
  if (o.command.empty() && o.template_name.empty()) {
    std::cerr << "error: a command is required (allot run [OPTIONS] -- CMD), unless --template "
                 "gives one\n";
    return kUsage;
  }
  json body = json::object();
  if (!o.command.empty()) body["command"] = o.command;
  if (!o.template_name.empty()) body["template"] = o.template_name;
  put_placement(o.placement, body);
  if (!o.project.empty()) body["project_id"] = o.project;
  if (!o.region.empty()) body["region"] = o.region;
  if (!o.image.empty()) body["image"] = o.image;
  if (o.cpu_milli > 0) body["cpu_milli"] = o.cpu_milli;
  if (o.memory_mib > 0) body["memory_mib"] = o.memory_mib;
  if (o.max_run_s > 0) body["max_run_s"] = o.max_run_s;
  if (o.interactive) body["interactive"] = true;
  if (o.requeue) body["requeue"] = true;
  if (o.nodes != 1) body["nodes"] = o.nodes;
  if (!o.idle_stop.empty()) {
    std::string error;
    const auto idle = parse_idle_spec(o.idle_stop, error);
    if (!idle) {
      std::cerr << "error: --idle-stop: " << error << "\n";
      return kUsage;
    }
    body["idle"] = *idle;
  }
  json env, labels;
  if (!pairs(o.env, "--env", env) || !pairs(o.labels, "--label", labels)) return kUsage;
  if (!env.empty()) body["env"] = env;
  if (!labels.empty()) body["labels"] = labels;
  json mounts;
  if (!volume_mounts(o.volumes, mounts)) return kUsage;
  if (!mounts.empty()) body["volumes"] = mounts;
  if (o.public_ports && o.ports.empty()) {
    std::cerr << "error: --public makes the --port ports public: name at least one\n";
    return kUsage;
  }
  json ports;
  if (!published_ports(o.ports, o.public_ports, ports)) return kUsage;
  if (!ports.empty()) body["ports"] = ports;
  // Every launch goes with a key, so that a failover's retry cannot launch it twice.
  std::string key = o.idempotency_key;
  if (key.empty()) {
    SystemClock clock;
    key = "run-" + RandomIdSource(clock).new_secret().substr(6, 32);
  }
  json answer;
  const int code = session.try_call("POST", "/v1/instances", body, answer, key);
  if (code == kOk) {
    show_launched(session, answer);
  } else {
    report_launch_refusal(session, answer);
  }
  return code;
}

// Prints the output from the start (or the last `tail` lines); with `follow`, keeps printing
// until the instance has ended and everything is shown.
int show_logs(Session& session, const std::string& id, int tail, bool follow) {
  std::string target = "/v1/instances/" + id + "/logs";
  json answer;
  int code = session.call("GET", tail > 0 ? target + "?tail=" + std::to_string(tail) : target,
                          nullptr, answer);
  for (;;) {
    if (code != kOk) return code;
    const std::string data = answer.value("data", "");
    if (const int64_t dropped = answer.value("dropped_bytes", int64_t{0}); dropped > 0) {
      std::cerr << "[allot: " << dropped
                << " bytes of this instance's output were dropped: it wrote more, or faster, than "
                   "is kept]\n";
    }
    std::cout << data << std::flush;
    const bool ended = answer.value("ended", false);
    if (data.empty() && (!follow || ended)) return kOk;
    if (data.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    code = session.call("GET", target + "?offset=" + std::to_string(answer.value("next_offset", 0)),
                        nullptr, answer);
  }
}

// allot stop: one line of what the stop did (`allot describe instance ID` has the rest).
int stop_instance(Session& session, const std::string& id) {
  json answer;
  const int code = session.call("POST", "/v1/instances/" + id + "/stop", nullptr, answer);
  if (code != kOk || session.json_output()) {
    if (code == kOk) session.show(answer);
    return code;
  }
  if (answer["ended_at"].is_string()) {
    std::cout << id << " has ended: " << answer.value("state", "") << "\n";
  } else {
    std::cout << "stopping " << id << ": its work has its grace to end, then is killed\n";
  }
  return code;
}

}  // namespace

bool pairs(const std::vector<std::string>& items, const char* flag, json& out) {
  out = json::object();
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: " << flag << " takes KEY=VALUE, not '" << item << "'\n";
      return false;
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return true;
}

void add_cluster_commands(CLI::App& app, Action& action) {
  static std::string id, name;
  static int limit = 0, tail = 0;
  static bool follow = false;
  static int64_t expires_in_s = 0;
  static RunOptions run;

  CLI::App* nodes = app.add_subcommand("nodes", "list nodes (operator admins)");
  add_limit(*nodes, limit);
  nodes->callback(
      [&action] { action = list_of("/v1/nodes", limit, kNodeColumns, summarise_nodes); });

  CLI::App* node = add_group(app, "node", "one node: get, cordon, uncordon, drain, delete, revoke");
  node->fallthrough();
  // Each verb's method and path: delete takes an empty node out of the fleet; revoke makes its
  // agent's credential stop working.
  struct Verb {
    const char* name;
    const char* help;
    const char* method;
    const char* suffix;
  };
  static constexpr Verb kVerbs[] = {
      {"get", "show a node", "GET", ""},
      {"cordon", "take no new work", "POST", "/cordon"},
      {"uncordon", "take work again", "POST", "/uncordon"},
      {"drain", "take no new work and wait for the work to end", "POST", "/drain"},
      {"delete", "take an empty node out of the fleet (kept for the books)", "DELETE", ""},
      {"revoke", "revoke the node's credential: its agent is refused", "POST",
       "/revoke-credential"}};
  for (const Verb& verb : kVerbs) {
    CLI::App* sub = node->add_subcommand(verb.name, verb.help);
    sub->add_option("id", id, "the node's id")->required();
    sub->callback([&action, &verb] {
      action = show_call(verb.method, [&verb] { return "/v1/nodes/" + id + verb.suffix; });
    });
  }

  CLI::App* tokens = add_group(app, "join-tokens", "tokens that let agents join");
  tokens->fallthrough();
  CLI::App* token_create = tokens->add_subcommand("create", "create one (shown once)");
  token_create->add_option("name", name, "what it is for")->required();
  token_create
      ->add_option("--expires-in", expires_in_s, "how long until it expires (90s, 10m, 2h, 1d)")
      ->transform(duration_seconds());
  token_create->callback([&action] {
    action = show_call(
        "POST", [] { return std::string("/v1/join-tokens"); },
        [] {
          json body{{"name", name}};
          if (expires_in_s > 0) body["expires_in_s"] = expires_in_s;
          return body;
        });
  });
  CLI::App* token_list = tokens->add_subcommand("list", "list them");
  token_list->callback(
      [&action] { action = list_of("/v1/join-tokens", limit, kTokenColumns, nullptr); });
  add_id_call(*tokens, "revoke", "revoke one", "DELETE", "/v1/join-tokens", action);

  CLI::App* run_cmd = app.add_subcommand("run", "launch an instance: allot run [OPTIONS] -- CMD");
  add_placement_options(*run_cmd, run.placement, true);
  run_cmd->add_option("--project", run.project, "project id (default: the only one)");
  run_cmd->add_option("--region", run.region, "region");
  run_cmd->add_option("--image", run.image,
                      "the OCI image to run in (default: the operator's default_image)");
  run_cmd->add_option("--cpu-milli", run.cpu_milli, "CPU to reserve, in milli-CPUs");
  run_cmd->add_option("--memory-mib", run.memory_mib, "memory to reserve");
  run_cmd->add_option("--env", run.env, "KEY=VALUE, repeatable")->allow_extra_args(false);
  run_cmd->add_option("--label", run.labels, "KEY=VALUE, repeatable")->allow_extra_args(false);
  run_cmd->add_option("--max-run", run.max_run_s, "stop after this long (90s, 10m, 2h, 1d)")
      ->transform(duration_seconds());
  run_cmd
      ->add_option("--volume", run.volumes,
                   "NAME:/PATH[:ro]: mount a volume (allot volumes), repeatable")
      ->allow_extra_args(false);
  run_cmd
      ->add_option("--port", run.ports,
                   "PORT[:http|:https]: publish a port at /i/INSTANCE/PORT/ (allot ports), "
                   "repeatable")
      ->allow_extra_args(false);
  run_cmd->add_flag("--public", run.public_ports,
                    "the published ports answer without a key or a link");
  run_cmd->add_option("--idempotency-key", run.idempotency_key,
                      "launch once however often this runs with the same KEY (default: a new "
                      "key each time)");
  run_cmd->add_flag("--interactive", run.interactive, "runs until stopped");
  run_cmd->add_flag("--requeue", run.requeue, "spot: go back to the queue when preempted");
  run_cmd->add_option("--nodes", run.nodes,
                      "a gang: this many nodes, each with --gpus, all started at once");
  run_cmd->add_option("--idle-stop", run.idle_stop,
                      "PCT:WINDOW[:notify]: stop (or notify) when its GPUs stay under PCT % "
                      "for WINDOW (s, m, h or d)");
  run_cmd->add_option("--template", run.template_name,
                      "launch from an operator's template (allot templates lists them); the "
                      "other options override its fields");
  run_cmd->add_option("command", run.command,
                      "the command and its arguments (optional with a template that has one)");
  run_cmd->callback(
      [&action] { action = [](Session& session) { return run_instance(session, run); }; });

  CLI::App* templates =
      app.add_subcommand("templates", "the operator's launch templates, for allot run --template");
  add_limit(*templates, limit);
  templates->callback([&action] {
    action = list_of("/v1/templates", limit, kTemplateColumns, summarise_templates);
  });

  CLI::App* ps = app.add_subcommand("ps", "list instances at work, newest first");
  static PsOptions ps_options;
  ps->add_option("--limit", ps_options.limit, "show only the newest N (default: all)")
      ->check(CLI::NonNegativeNumber);
  ps->add_option("--state", ps_options.state, "only instances in this state");
  ps->add_flag("--all", ps_options.all, "ended instances too");
  ps->callback(
      [&action] { action = [](Session& session) { return list_instances(session, ps_options); }; });

  CLI::App* logs = app.add_subcommand("logs", "an instance's output");
  logs->add_option("id", id, "the instance's id")->required();
  logs->add_flag("-f,--follow", follow, "keep printing until it ends");
  logs->add_option("--tail", tail, "start with the last N lines");
  logs->callback([&action] {
    action = [](Session& session) { return show_logs(session, id, tail, follow); };
  });

  CLI::App* stop = app.add_subcommand("stop", "stop an instance");
  stop->add_option("id", id, "the instance's id")->required();
  stop->callback(
      [&action] { action = [](Session& session) { return stop_instance(session, id); }; });

  CLI::App* describe = app.add_subcommand("describe", "show an instance, with its events");
  describe->add_option("kind", name, "instance")->required()->check(CLI::IsMember({"instance"}));
  describe->add_option("id", id, "its id")->required();
  describe->callback(
      [&action] { action = show_call("GET", [] { return "/v1/instances/" + id; }); });
}

}  // namespace allot::cli
