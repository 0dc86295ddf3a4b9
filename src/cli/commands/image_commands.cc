// images: what container nodes hold in their image stores, and pre-pulls of an image onto the
// nodes of a pool (operator admins).
#include <chrono>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kImageColumns = {
    {"node", "node"}, {"image", "image"}, {"id", "id"}, {"size", "size"}, {"created", "created"}};
const std::vector<Column> kStoreColumns = {
    {"node", "node"}, {"pool", "pool"},   {"images", "images"},       {"used", "used"},
    {"free", "free"}, {"total", "total"}, {"reported", "reported_at"}};
const std::vector<Column> kPullColumns = {
    {"id", "id"},         {"image", "image"},     {"pool", "pool"},         {"done", "done"},
    {"failed", "failed"}, {"waiting", "waiting"}, {"created", "created_at"}};
const std::vector<Column> kTargetColumns = {
    {"node", "node"}, {"state", "state"}, {"message", "message"}, {"ended", "ended_at"}};

struct Options {
  std::string image, pool, node, id;
  bool wait = false;
  int limit = 0;
};

// "512 MiB", "1.5 GiB": sizes for people, in integer arithmetic.
std::string size_text(int64_t bytes) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int64_t kGiB = int64_t{1} << 30;
  if (bytes >= kGiB) return fmt::format("{}.{} GiB", bytes / kGiB, bytes % kGiB * 10 / kGiB);
  return fmt::format("{} MiB", (bytes + kMiB - 1) / kMiB);
}

// Each node's images as rows of one table, and each node's image store as a row of another.
void show_images(Session& session, const json& nodes) {
  if (session.json_output()) {
    session.show_list(nodes, {});
    return;
  }
  json images = json::array();
  json stores = json::array();
  for (const json& node : nodes) {
    for (const json& image : node["images"]) {
      const json& names = image["names"];
      images.push_back({{"node", node["node"]},
                        {"image", names.empty() ? json("(untagged)") : names.front()},
                        {"id", image["id"].get<std::string>().substr(0, 12)},
                        {"size", size_text(image["size_bytes"])},
                        {"created", image["created_at"]}});
    }
    stores.push_back({{"node", node["node"]},
                      {"pool", node["pool"]},
                      {"images", node["images"].size()},
                      {"used", size_text(node["images_bytes"])},
                      {"free", size_text(node["store_free_bytes"])},
                      {"total", size_text(node["store_total_bytes"])},
                      {"reported_at", node["reported_at"]}});
  }
  session.show_list(images, kImageColumns);
  std::cout << "\n";
  session.show_list(stores, kStoreColumns);
}

json pull_row(const json& pull) {
  json row = pull;
  const json counts = pull.value("counts", json::object());
  row["done"] = counts.value("done", 0);
  row["failed"] = counts.value("failed", 0);
  row["waiting"] = counts.value("pending", 0) + counts.value("pulling", 0);
  return row;
}

void show_pull(Session& session, const json& pull) {
  if (session.json_output()) {
    session.show(pull);
    return;
  }
  std::cout << fmt::format("pull {} of {}: {}\n", pull["id"].get<std::string>(),
                           pull["image"].get<std::string>(),
                           pull["finished"].get<bool>() ? "finished" : "under way");
  session.show_list(pull["nodes"], kTargetColumns);
}

// Polls the pull until every node has pulled it or failed; exit 1 when any failed.
int wait_for_pull(Session& session, const std::string& id) {
  json pull;
  while (true) {
    if (const int code = session.call("GET", "/v1/images/pulls/" + id, nullptr, pull);
        code != kOk) {
      return code;
    }
    if (pull["finished"].get<bool>()) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  show_pull(session, pull);
  return pull["counts"].value("failed", 0) == 0 ? kOk : kServerError;
}

}  // namespace

void add_image_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* images = add_group(app, "images", "images on container nodes (operator admins)");
  CLI::App* list = images->add_subcommand("list", "each node's images and image store");
  list->add_option("--pool", o.pool, "only nodes with the label pool=NAME");
  list->add_option("--node", o.node, "only this node (name or id)");
  list->callback([&action] {
    action = [](Session& session) {
      json nodes;
      const int code =
          session.list("/v1/images" + query({{"pool", &o.pool}, {"node", &o.node}}), 0, nodes);
      if (code == kOk) show_images(session, nodes);
      return code;
    };
  });
  CLI::App* pull = images->add_subcommand(
      "pull", "pull an image onto every container node of a pool, ahead of the work");
  pull->add_option("image", o.image, "the image reference")->required();
  pull->add_option("--pool", o.pool, "nodes with the label pool=NAME (default: every node)");
  pull->add_flag("--wait", o.wait, "wait until every node has it (exit 1 if any failed)");
  pull->callback([&action] {
    action = [](Session& session) {
      json body{{"image", o.image}};
      if (!o.pool.empty()) body["pool"] = o.pool;
      json pull;
      if (const int code = session.call("POST", "/v1/images/pulls", body, pull); code != kOk) {
        return code;
      }
      if (o.wait) return wait_for_pull(session, pull["id"].get<std::string>());
      show_pull(session, pull);
      return static_cast<int>(kOk);
    };
  });
  CLI::App* pulls = images->add_subcommand("pulls", "pre-pulls, or one with its nodes");
  pulls->add_option("id", o.id, "a pull's id: show its nodes");
  add_limit(*pulls, o.limit);
  pulls->callback([&action] {
    action = [](Session& session) {
      json answer;
      if (!o.id.empty()) {
        const int code =
            session.call("GET", "/v1/images/pulls/" + percent_encode(o.id), nullptr, answer);
        if (code == kOk) show_pull(session, answer);
        return code;
      }
      const int code = session.list("/v1/images/pulls", o.limit, answer);
      if (code != kOk) return code;
      json rows = json::array();
      for (const json& p : answer) rows.push_back(pull_row(p));
      session.show_list(session.json_output() ? answer : rows, kPullColumns);
      return code;
    };
  });
}

}  // namespace allot::cli
