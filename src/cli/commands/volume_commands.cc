// volumes: tenants' storage that outlives their instances, mounted with `allot run --volume`.
#include <charconv>
#include <iostream>

#include "cli/commands.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kVolumeColumns = {{"name", "name"},
                                            {"id", "id"},
                                            {"region", "region"},
                                            {"backend", "backend"},
                                            {"size_gb", "size_gb"},
                                            {"node", "node_id"},
                                            {"mounted by", "mounted_by"},
                                            {"created", "created_at"}};

struct Options {
  std::string name, size, region, backend, project, tenant;
};

// "100G", "100GB", "2T", "2TB" or a bare number of GB, in decimal units.
std::optional<int64_t> parse_size_gb(const std::string& text) {
  int64_t number = 0;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || number < 1) return std::nullopt;
  const std::string unit(rest, end);
  if (unit.empty() || unit == "G" || unit == "GB") return number;
  if ((unit == "T" || unit == "TB") && number <= INT64_MAX / 1000) return number * 1000;
  return std::nullopt;
}

}  // namespace

void add_volume_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* volumes =
      add_group(app, "volumes", "storage that outlives instances: create, list, get, delete");
  CLI::App* create = volumes->add_subcommand("create", "make a volume");
  create->add_option("name", o.name, "its name, for allot run --volume NAME:/PATH")->required();
  create->add_option("--size", o.size, "its size: 100G, 2T (decimal units)")->required();
  create->add_option("--region", o.region, "its region (default: the only one)");
  create->add_option("--backend", o.backend,
                     "local (one node's disk) or nfs (any node of the region; default where the "
                     "operator has an NFS export)");
  create->add_option("--project", o.project, "project id (default: the only one)");
  create->callback([&action] {
    action = [](Session& session) -> int {
      const auto size_gb = parse_size_gb(o.size);
      if (!size_gb) {
        std::cerr << "error: --size takes a whole number of GB or TB such as 100G or 2T, not '"
                  << o.size << "'\n";
        return kUsage;
      }
      json body{{"name", o.name}, {"size_gb", *size_gb}};
      put(body, "region", o.region);
      put(body, "backend", o.backend);
      put(body, "project_id", o.project);
      return show_call(
          "POST", [] { return std::string("/v1/volumes"); }, [body] { return body; })(session);
    };
  });
  add_list(
      *volumes, "list", "the volumes", "/v1/volumes",
      {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's (operator admins)"},
       {.flag = "--project", .name = "project_id", .help = "only this project's"}},
      kVolumeColumns, action);
  for (const auto& [verb, method, help] :
       {std::tuple{"get", "GET", "one volume, by name or id"},
        std::tuple{"delete", "DELETE", "delete a volume no instance mounts, and its data"}}) {
    CLI::App* one = volumes->add_subcommand(verb, help);
    one->add_option("name", o.name, "the volume's name or id")->required();
    one->callback([&action, method] {
      action = show_call(method, [] { return "/v1/volumes/" + percent_encode(o.name); });
    });
  }
}

}  // namespace allot::cli
