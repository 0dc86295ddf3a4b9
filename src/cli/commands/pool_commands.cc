// pools: node pools that the autoscaler grows and shrinks (operator admins).
#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kPoolColumns = {{"id", "id"},
                                          {"name", "name"},
                                          {"model", "gpu_model"},
                                          {"region", "region"},
                                          {"min", "min_nodes"},
                                          {"max", "max_nodes"},
                                          {"nodes", "live_nodes"},
                                          {"provider", "provider"},
                                          {"boot failures", "boot_failures"}};

struct Options {
  std::string id, name, model, region, provider, create_command, delete_command;
  int64_t min_nodes = -1, max_nodes = -1, gpus = -1, cpu_milli = -1, memory_mib = -1;
  int64_t boot_timeout_s = -1, idle_timeout_s = -1, cooldown_s = -1;
};

// The size and timer options both `create` and `set` take.
void add_size_options(CLI::App& command, Options& o) {
  command.add_option("--min", o.min_nodes, "nodes kept however idle (default 0)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--max", o.max_nodes, "nodes at most")->check(CLI::NonNegativeNumber);
  command.add_option("--boot-timeout", o.boot_timeout_s, "how long a new node has to join (10m)")
      ->transform(duration_seconds());
  command
      .add_option("--idle-timeout", o.idle_timeout_s, "how long without work before a node goes")
      ->transform(duration_seconds());
  command.add_option("--cooldown", o.cooldown_s, "how long between two scale-ups (90s)")
      ->transform(duration_seconds());
}

// The options that were given, as the API's fields.
json size_fields(const Options& o) {
  json body = json::object();
  auto put = [&](const char* name, int64_t value) {
    if (value >= 0) body[name] = value;
  };
  put("min_nodes", o.min_nodes);
  put("max_nodes", o.max_nodes);
  put("boot_timeout_s", o.boot_timeout_s);
  put("idle_timeout_s", o.idle_timeout_s);
  put("cooldown_s", o.cooldown_s);
  return body;
}

}  // namespace

void add_pool_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* pools = add_group(app, "pools", "node pools the autoscaler grows and shrinks");
  add_list(*pools, "list", "list pools", "/v1/pools", {}, kPoolColumns, action);
  add_id_call(*pools, "show", "a pool with its nodes", "GET", "/v1/pools", action);

  CLI::App* create = pools->add_subcommand("create", "create a pool (operator admins)");
  create->add_option("name", o.name, "its name: letters, digits and '-'")->required();
  create->add_option("--model", o.model, "GPU model of its nodes, e.g. H100-80GB")->required();
  create->add_option("--region", o.region, "region of its nodes (default: default)");
  create->add_option("--provider", o.provider, "static, command or local")->required();
  create->add_option("--gpus", o.gpus, "GPUs per node (default 8)");
  create->add_option("--cpu-milli", o.cpu_milli, "CPU per node, in thousandths");
  create->add_option("--memory-mib", o.memory_mib, "memory per node");
  create->add_option("--create-command", o.create_command, "command provider: makes a node");
  create->add_option("--delete-command", o.delete_command, "command provider: removes a node");
  add_size_options(*create, o);
  create->callback([&action] {
    action = show_call(
        "POST", [] { return std::string("/v1/pools"); },
        [] {
          json body = size_fields(o);
          body["name"] = o.name;
          body["gpu_model"] = o.model;
          body["provider"] = o.provider;
          put(body, "region", o.region);
          if (o.gpus >= 0) body["gpus_per_node"] = o.gpus;
          if (o.cpu_milli >= 0) body["cpu_milli"] = o.cpu_milli;
          if (o.memory_mib >= 0) body["memory_mib"] = o.memory_mib;
          put(body, "create_command", o.create_command);
          put(body, "delete_command", o.delete_command);
          return body;
        });
  });
  CLI::App* set = pools->add_subcommand("set", "change a pool's size or timers (operator admins)");
  set->add_option("id", o.id, "its id")->required();
  add_size_options(*set, o);
  set->callback([&action] {
    action = show_call("PATCH", [] { return "/v1/pools/" + o.id; }, [] { return size_fields(o); });
  });
  add_id_call(*pools, "delete", "delete a pool with no nodes left", "DELETE", "/v1/pools", action);
}

}  // namespace allot::cli
