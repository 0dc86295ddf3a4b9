// spot: rules that make a model's spot price follow its utilisation in a region, and the prices
// they set.
#include <fmt/format.h>

#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kRuleColumns = {{"model", "gpu_model"},
                                          {"region", "region"},
                                          {"utilisation %", "utilisation_pct"},
                                          {"spot now", "spot_price_now"},
                                          {"curve now", "curve_price_now"},
                                          {"every s", "interval_s"},
                                          {"last priced", "last_priced_at"}};
const std::vector<Column> kHistoryColumns = {{"from", "effective_at"}, {"gpu-hour", "gpu_hour"}};

struct Options {
  std::string model, region, curve;
  int64_t interval_s = 0;
  int limit = 0;
};

// "0:1.00,50:2.00,100:4.00" as the API's points; what is not a point is passed on for the
// server to refuse with the rest.
json curve_points(const std::string& text) {
  json points = json::array();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string point = text.substr(start, end - start);
    const size_t colon = point.find(':');
    json p = {{"gpu_hour", colon == std::string::npos ? point : point.substr(colon + 1)}};
    try {
      p["utilisation_pct"] = colon == std::string::npos ? -1 : std::stoi(point.substr(0, colon));
    } catch (const std::exception&) {
      p["utilisation_pct"] = -1;
    }
    points.push_back(std::move(p));
    start = end + 1;
  }
  return points;
}

}  // namespace

void add_spot_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* spot = add_group(app, "spot", "spot prices that follow utilisation");
  CLI::App* set = spot->add_subcommand("set", "set a model's spot price curve (operator admins)");
  set->add_option("--model", o.model, "GPU model, e.g. H100-80GB")->required();
  set->add_option("--region", o.region, "region")->required();
  set->add_option("--curve", o.curve,
                  "utilisation %:price per GPU-hour points from 0 to 100, e.g. "
                  "0:1.00,50:2.00,100:4.00")
      ->required();
  set->add_option("--interval", o.interval_s, "how long between looks (default 5m)")
      ->transform(duration_seconds());
  set->callback([&action] {
    action = show_call(
        "PUT", [] { return std::string("/v1/spot-rules"); },
        [] {
          json body = {
              {"gpu_model", o.model}, {"region", o.region}, {"curve", curve_points(o.curve)}};
          if (o.interval_s != 0) body["interval_s"] = o.interval_s;
          return body;
        });
  });
  add_list(*spot, "list", "the rules, utilisation and spot prices now", "/v1/spot-rules", {},
           kRuleColumns, action);
  CLI::App* history = spot->add_subcommand("history", "every spot price of a model in a region");
  history->add_option("--model", o.model, "GPU model")->required();
  history->add_option("--region", o.region, "region")->required();
  add_limit(*history, o.limit);
  history->callback([&action] {
    action = show_list(
        [] {
          const std::string spot_class = "spot";
          const std::string from = "1970-01-01T00:00:00Z";
          return "/v1/prices" + query({{"gpu_model", &o.model},
                                       {"region", &o.region},
                                       {"price_class", &spot_class},
                                       {"at", &from}});
        },
        o.limit, kHistoryColumns);
  });
  CLI::App* remove = spot->add_subcommand("delete", "stop following utilisation (operator admins)");
  remove->add_option("--model", o.model, "GPU model")->required();
  remove->add_option("--region", o.region, "region")->required();
  remove->callback([&action] {
    action = show_call("DELETE", [] { return "/v1/spot-rules/" + o.model + "/" + o.region; });
  });
}

}  // namespace allot::cli
