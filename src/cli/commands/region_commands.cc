// latency, regions and quote: the latency table, the region catalog, and where a request would
// run now.
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kLatencyColumns = {
    {"from", "from"}, {"region", "region"}, {"rtt ms", "rtt_ms"}, {"updated", "updated_at"}};

const std::vector<Column> kRegionColumns = {{"region", "region"},
                                            {"model", "gpu_model"},
                                            {"gpus", "gpus"},
                                            {"free", "free_gpus"},
                                            {"on-demand/h", "on_demand_gpu_hour"},
                                            {"spot/h", "spot_gpu_hour"},
                                            {"g/kWh", "carbon_g_per_kwh"},
                                            {"pue", "pue"}};

const std::vector<Column> kQuoteColumns = {{"rank", "rank"},
                                           {"region", "region"},
                                           {"model", "gpu_model"},
                                           {"free", "free_gpus"},
                                           {"price/h", "price_per_hour"},
                                           {"gCO2e/h", "carbon_g_per_hour"},
                                           {"latency ms", "latency_ms"},
                                           {"why", "why"}};

const std::vector<Column> kExcludedColumns = {{"region", "region"},
                                              {"model", "gpu_model"},
                                              {"price/h", "price_per_hour"},
                                              {"reason", "reason"}};

struct Options {
  std::string from, region;
  PlacementOptions placement;
};

// A price cell: "none" where work of that class cannot run for want of a price, and the on-demand
// figure marked where spot falls back to it.
void mark_prices(json& row) {
  for (const char* field : {"on_demand_gpu_hour", "spot_gpu_hour"}) {
    if (row.contains(field) && row[field].is_null()) row[field] = "none";
  }
  if (row.value("spot_from_on_demand", false)) {
    row["spot_gpu_hour"] = row["spot_gpu_hour"].get<std::string>() + " (on-demand)";
  }
}

// One row per region and model (a region with no models gets one row), for the table.
json region_rows(const json& regions) {
  json rows = json::array();
  for (const json& r : regions) {
    json base = {
        {"region", r["region"]}, {"carbon_g_per_kwh", r["carbon_g_per_kwh"]}, {"pue", r["pue"]}};
    if (r["models"].empty()) rows.push_back(base);
    for (const json& m : r["models"]) {
      json row = base;
      row.update(m);
      mark_prices(row);
      rows.push_back(row);
    }
  }
  return rows;
}

int show_regions(Session& session) {
  json answer;
  const int code = session.call("GET", "/v1/regions", nullptr, answer);
  if (code != kOk) return code;
  if (session.json_output()) {
    std::cout << answer["items"].dump(2) << '\n';
  } else {
    print_table(std::cout, region_rows(answer["items"]), kRegionColumns);
  }
  return kOk;
}

int show_quote(Session& session, const PlacementOptions& o) {
  json body = json::object();
  put_placement(o, body);
  json answer;
  const int code = session.call("POST", "/v1/quote", body, answer);
  if (code != kOk) return code;
  if (session.json_output()) {
    std::cout << answer.dump(2) << '\n';
    return kOk;
  }
  std::cout << "ranked by " << answer.value("prefer", "price") << ", "
            << answer.value("price_class", "on-demand") << " prices\n";
  print_table(std::cout, answer["options"], kQuoteColumns);
  if (!answer["excluded"].empty()) {
    std::cout << "\nexcluded:\n";
    print_table(std::cout, answer["excluded"], kExcludedColumns);
  }
  return kOk;
}

}  // namespace

void add_placement_options(CLI::App& command, PlacementOptions& o, bool shape, bool model_alias) {
  if (shape) {
    command.add_option("--gpus", o.gpus, "whole GPUs, 1 to 8 (default 1)");
    command.add_option("--milli,--gpu-milli", o.milli, "a fraction of one GPU, 1 to 999 milli");
    command
        .add_option(model_alias ? "--gpu-type,--model" : "--gpu-type", o.gpu_types,
                    "allowed GPU model or family, repeatable")
        ->allow_extra_args(false);
    command.add_option("--class", o.price_class, "on-demand (default), spot or reserved");
    command.add_flag("--spot", o.spot, "spot work: the same as --class spot");
    command.add_option("--max-price", o.max_price,
                       "the most it pays per GPU-hour: never placed above it (spot: preempted "
                       "when the price passes it)");
  }
  command.add_option("--prefer", o.prefer, "price, carbon or latency: the region it prefers");
  command.add_option("--from", o.from, "the client location latency is measured from");
  command.add_option("--regions", o.regions, "allowed regions, comma-separated (data residency)");
}

void put_placement(const PlacementOptions& o, json& body) {
  if (o.gpus > 0) body["gpus"] = o.gpus;
  if (o.milli > 0) body["gpu_milli"] = o.milli;
  if (!o.gpu_types.empty()) body["gpu_models"] = o.gpu_types;
  if (!o.price_class.empty()) body["price_class"] = o.price_class;
  if (o.spot) body["price_class"] = "spot";
  if (!o.max_price.empty()) body["max_price"] = o.max_price;
  if (!o.prefer.empty()) body["prefer"] = o.prefer;
  if (!o.from.empty()) body["from"] = o.from;
  if (!o.regions.empty()) {
    // Every piece is sent, empty ones too, so that the server names the mistake.
    std::vector<std::string> regions;
    std::istringstream in(o.regions + ",");
    for (std::string region; std::getline(in, region, ',');) regions.push_back(region);
    body["regions"] = regions;
  }
}

void add_region_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* latency = add_group(app, "latency", "round trips from client locations to regions");
  add_body_call(*latency, "set", "set one (operator admins)", "PUT", "/v1/latency",
                {{.flag = "from",
                  .name = "from",
                  .help = "the client location, e.g. eu-users or a region",
                  .required = true},
                 {.flag = "region", .name = "region", .help = "the region", .required = true},
                 {.flag = "rtt_ms",
                  .name = "rtt_ms",
                  .help = "the round trip in milliseconds",
                  .required = true,
                  .whole = true}},
                action);
  add_list(*latency, "list", "list them", "/v1/latency",
           {{.flag = "--from", .name = "from", .help = "only from this location"}}, kLatencyColumns,
           action);
  CLI::App* remove = latency->add_subcommand("delete", "delete one (operator admins)");
  remove->add_option("from", o.from, "the client location")->required();
  remove->add_option("region", o.region, "the region")->required();
  remove->callback([&action] {
    action = show_call("DELETE", [] {
      return "/v1/latency/" + percent_encode(o.from) + "/" + percent_encode(o.region);
    });
  });

  CLI::App* regions = app.add_subcommand("regions", "regions: GPUs, prices, carbon, latencies");
  regions->callback([&action] { action = show_regions; });

  CLI::App* quote = app.add_subcommand("quote", "where a request would run now, best first");
  add_placement_options(*quote, o.placement, true);
  quote->callback(
      [&action] { action = [](Session& session) { return show_quote(session, o.placement); }; });
}

}  // namespace allot::cli
