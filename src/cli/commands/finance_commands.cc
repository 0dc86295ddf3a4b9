// finance: the operator's books (assets, sites, fixed costs, rental prices) and what is read off
// them for a month (the report, payback, buy-or-rent). Operator admins only.
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/money.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kAssetColumns = {{"id", "id"},
                                           {"name", "name"},
                                           {"cost", "cost"},
                                           {"life", "life_months"},
                                           {"method", "method"},
                                           {"in-service", "in_service"},
                                           {"retired", "retired_at"}};
const std::vector<Column> kSiteColumns = {
    {"region", "region"}, {"pue", "pue"}, {"colocation", "colocation_per_kw_month"}};
const std::vector<Column> kCostColumns = {
    {"id", "id"},     {"name", "name"},       {"monthly", "monthly"},  {"region", "region"},
    {"rule", "rule"}, {"from", "from_month"}, {"until", "until_month"}};
const std::vector<Column> kRentColumns = {
    {"provider", "provider"}, {"gpu-model", "gpu_model"}, {"per-gpu-hour", "price_per_gpu_hour"}};
const std::vector<Column> kReportColumns = {{"key", "key"},
                                            {"gpus", "gpus"},
                                            {"revenue", "revenue"},
                                            {"costs", "costs"},
                                            {"margin", "margin"},
                                            {"utilisation", "utilisation"},
                                            {"idle-cost", "idle_cost"},
                                            {"break-even", "break_even_utilisation"},
                                            {"kwh", "energy_kwh"},
                                            {"co2-kg", "carbon_kg"}};
const std::vector<Column> kPaybackColumns = {{"asset", "asset_id"},
                                             {"name", "name"},
                                             {"cost", "cost"},
                                             {"recovered", "recovered"},
                                             {"last-month", "last_month_margin"},
                                             {"payback", "payback_month"},
                                             {"projected", "projected"}};
const std::vector<Column> kRentOrBuyColumns = {{"gpu-model", "gpu_model"},
                                               {"owned-costs", "owned_costs"},
                                               {"used-hours", "allocated_gpu_hours"},
                                               {"owned-per-hour", "owned_per_used_gpu_hour"},
                                               {"provider", "provider"},
                                               {"rent-per-hour", "price_per_gpu_hour"},
                                               {"rent-used", "used"}};

// The state each command's options write into; it outlives parsing, so actions may read it.
struct Options {
  std::string id, name, cost, in_service, salvage, method, factor, power, kind, principal, rate,
      payment, start, from, region, value, month, by, price_factor, utilisation;
  std::vector<std::string> nodes;
  int life = 0, term = 0;
  bool csv = false;
};

json asset_body(const Options& o) {
  json body{{"name", o.name},
            {"nodes", o.nodes},
            {"cost", o.cost},
            {"in_service", o.in_service},
            {"life_months", o.life}};
  put(body, "salvage", o.salvage);
  put(body, "method", o.method);
  put(body, "declining_factor", o.factor);
  put(body, "power_kw", o.power);
  if (!o.kind.empty()) {
    json financing{{"kind", o.kind}};
    put(financing, "principal", o.principal);
    put(financing, "annual_rate", o.rate);
    put(financing, "monthly_payment", o.payment);
    put(financing, "start_month", o.start);
    if (o.term != 0) financing["term_months"] = o.term;
    body["financing"] = financing;
  }
  return body;
}

// GETs a report and prints its note for people when it has one, answer[rows] (each row through
// `flatten`) as a table, then answer[tail] when there is one; in JSON mode, the whole answer.
Action show_report(std::function<std::string()> target, const char* rows,
                   const std::vector<Column>& columns, const char* tail = nullptr,
                   std::function<json(const json&)> flatten = nullptr) {
  return [target = std::move(target), flatten = std::move(flatten), rows, tail,
          &columns](Session& session) {
    json answer;
    const int code = session.call("GET", target(), nullptr, answer);
    if (code != kOk) return code;
    if (session.json_output()) {
      session.show(answer);
      return static_cast<int>(kOk);
    }
    if (answer.contains("note")) std::cout << answer["note"].get<std::string>() << "\n\n";
    session.show_list(flatten ? flatten(answer[rows]) : answer[rows], columns);
    if (tail != nullptr) {
      std::cout << "\n";
      session.show(answer[tail]);
    }
    return static_cast<int>(kOk);
  };
}

// A fraction the API writes with six decimals ("0.482000") in millionths, read as Money reads its
// six decimals; nullopt for anything else.
std::optional<int64_t> millionths(const json& fraction) {
  if (!fraction.is_string()) return std::nullopt;
  auto read = Money::parse(fraction.get<std::string>());
  return read ? std::optional<int64_t>(read->micros()) : std::nullopt;
}

// Millionths as a percentage with one decimal: 482,000 as "48.2%".
std::string percent(int64_t ppm) {
  const int64_t tenths = (ppm + 500) / 1'000;
  return fmt::format("{}.{}%", tenths / 10, tenths % 10);
}

// The report's groups with utilisation and break-even as percentages. A break-even above 100 %
// means that no utilisation covers the costs at the price realised, and says so.
json percent_rows(json groups) {
  for (json& g : groups) {
    if (auto used = millionths(g["utilisation"])) g["utilisation"] = percent(*used);
    if (auto even = millionths(g["break_even_utilisation"])) {
      g["break_even_utilisation"] = *even > 1'000'000 ? "not at this price" : percent(*even);
    }
  }
  return groups;
}

// One row per GPU model and provider: the model's own figures beside each quote.
json rent_rows(const json& models) {
  json out = json::array();
  for (const json& model : models) {
    json quotes = model["quotes"].empty() ? json::array({json::object()}) : model["quotes"];
    for (const json& quote : quotes) {
      json row = model;
      row.erase("quotes");
      row.update(quote);
      out.push_back(row);
    }
  }
  return out;
}

void add_asset_add(CLI::App& assets, Action& action, Options& o) {
  CLI::App* add = assets.add_subcommand("add", "register a node or a batch of nodes as an asset");
  add->add_option("--name", o.name, "the asset's name")->required();
  add->add_option("--node", o.nodes, "a node's id or name (repeat for a batch)")->required();
  add->add_option("--cost", o.cost, "purchase price, e.g. 300000.00")->required();
  add->add_option("--in-service", o.in_service, "RFC 3339 UTC")->required();
  add->add_option("--life", o.life, "useful life in months")->required();
  add->add_option("--salvage", o.salvage, "value at the end of its life (default 0)");
  add->add_option("--method", o.method, "straight_line (default) or declining_balance");
  add->add_option("--declining-factor", o.factor, "declining balance: 2.0 (default) is double");
  add->add_option("--power-kw", o.power, "contracted power, for colocation");
  add->add_option("--financing", o.kind, "cash (default), loan or lease");
  add->add_option("--principal", o.principal, "loan: the amount borrowed");
  add->add_option("--rate", o.rate, "loan: the annual rate as a fraction, e.g. 0.065");
  add->add_option("--term", o.term, "loan or lease: months");
  add->add_option("--payment", o.payment, "lease: the monthly payment");
  add->add_option("--start-month", o.start, "loan or lease: first payment's month (YYYY-MM)");
  add->callback([&action, &o] {
    action = show_call(
        "POST", [] { return std::string("/v1/finance/assets"); }, [&o] { return asset_body(o); });
  });
}

void add_asset_commands(CLI::App& finance, Action& action, Options& o) {
  CLI::App* assets = add_group(finance, "assets", "servers and what they cost");
  add_asset_add(*assets, action, o);
  add_list(*assets, "list", "list assets", "/v1/finance/assets", {}, kAssetColumns, action);
  CLI::App* show = assets->add_subcommand("show", "an asset with its schedules");
  show->add_option("id", o.id, "its id")->required();
  show->add_flag("--csv", o.csv, "the schedules as CSV");
  show->callback([&action, &o] {
    if (o.csv) {
      action = show_text([&o] { return "/v1/finance/assets/" + o.id + "?format=csv"; });
    } else {
      action = show_call("GET", [&o] { return "/v1/finance/assets/" + o.id; });
    }
  });
  CLI::App* estimate =
      assets->add_subcommand("estimate", "change the life or salvage from a month");
  estimate->add_option("id", o.id, "its id")->required();
  estimate->add_option("--from", o.from, "the first month it applies to (YYYY-MM)")->required();
  estimate->add_option("--life", o.life, "the whole useful life in months")->required();
  estimate->add_option("--salvage", o.salvage, "the salvage value (default: unchanged)");
  estimate->callback([&action, &o] {
    action = show_call(
        "POST", [&o] { return "/v1/finance/assets/" + o.id + "/estimates"; },
        [&o] {
          json body{{"from_month", o.from}, {"life_months", o.life}};
          put(body, "salvage", o.salvage);
          return body;
        });
  });
  add_body_call(
      *assets, "retire", "take an asset out of service", "POST", "/v1/finance/assets",
      {{.flag = "id", .name = "id", .help = "its id", .required = true, .in_path = true},
       {.flag = "--at", .name = "at", .help = "when (RFC 3339 UTC; default now)"},
       {.flag = "--proceeds", .name = "proceeds", .help = "what it was sold for (default 0)"}},
      action, "/retire");
}

void add_site_commands(CLI::App& finance, Action& action, Options& o) {
  CLI::App* site = add_group(finance, "site", "a region's PUE and colocation price");
  add_body_call(*site, "set", "set a region's PUE or colocation price", "PUT", "/v1/finance/sites",
                {{.flag = "region",
                  .name = "region",
                  .help = "the region",
                  .required = true,
                  .in_path = true},
                 {.flag = "--pue", .name = "pue", .help = "facility over IT energy, e.g. 1.3"},
                 {.flag = "--colocation",
                  .name = "colocation_per_kw_month",
                  .help = "price per kW of contracted power a month"}},
                action);
  add_list(*site, "list", "list sites", "/v1/finance/sites", {}, kSiteColumns, action,
           Limit::kNone);
  // The two series of a site: energy price and grid intensity, each from a moment on.
  for (const bool power : {true, false}) {
    CLI::App* rate =
        power
            ? finance.add_subcommand("power-price", "a region's energy price from now (or --from)")
            : finance.add_subcommand("carbon", "a region's grid intensity from now (or --from)");
    rate->add_option("region", o.region, "the region")->required();
    rate->add_option("value", o.value, power ? "price per kWh, e.g. 0.21" : "gCO2e per kWh")
        ->required();
    rate->add_option("--from", o.from, "from when (RFC 3339 UTC; default now)");
    rate->callback([&action, &o, power] {
      action = show_call(
          "POST",
          [&o, power] {
            return "/v1/finance/sites/" + o.region + (power ? "/power-prices" : "/carbon");
          },
          [&o, power] {
            json body = json::object();
            put(body, "from", o.from);
            if (power) {
              body["price_per_kwh"] = o.value;
            } else {
              // A whole number goes as one; anything else as text, for the server to refuse.
              json grams = json::parse(o.value, nullptr, false);
              body["g_per_kwh"] = grams.is_discarded() ? json(o.value) : grams;
            }
            return body;
          });
    });
  }
}

void add_cost_commands(CLI::App& finance, Action& action) {
  CLI::App* costs = add_group(finance, "costs", "fixed monthly costs");
  add_body_call(
      *costs, "add", "add a fixed monthly cost", "POST", "/v1/finance/costs",
      {{.flag = "--name", .name = "name", .help = "what it is", .required = true},
       {.flag = "--monthly", .name = "monthly", .help = "the amount a month", .required = true},
       {.flag = "--region", .name = "region", .help = "only this region's nodes (default: all)"},
       {.flag = "--rule",
        .name = "rule",
        .help = "per_node (default), per_gpu, by_cost or by_power"},
       {.flag = "--from",
        .name = "from_month",
        .help = "first month (YYYY-MM; default this month)"},
       {.flag = "--until",
        .name = "until_month",
        .help = "the month it stops (YYYY-MM; default never)"}},
      action);
  add_list(*costs, "list", "list fixed costs", "/v1/finance/costs", {}, kCostColumns, action,
           Limit::kNone);
  add_id_call(*costs, "delete", "stop a fixed cost", "DELETE", "/v1/finance/costs", action);
  CLI::App* rent = add_group(finance, "rent", "public cloud prices to compare with");
  add_body_call(*rent, "set", "set a provider's price for a GPU model", "PUT",
                "/v1/finance/rental-prices",
                {{.flag = "provider", .name = "provider", .help = "the provider", .required = true},
                 {.flag = "gpu_model",
                  .name = "gpu_model",
                  .help = "a catalog model, e.g. H100-80GB",
                  .required = true},
                 {.flag = "price",
                  .name = "price_per_gpu_hour",
                  .help = "per GPU-hour, e.g. 2.49",
                  .required = true}},
                action);
  add_list(*rent, "list", "list rental prices", "/v1/finance/rental-prices", {}, kRentColumns,
           action, Limit::kNone);
}

void add_report_commands(CLI::App& finance, Action& action, Options& o) {
  CLI::App* report = finance.add_subcommand(
      "report", "the month's P&L, grouped (while it runs: to date, and the whole month projected)");
  report->add_option("--month", o.month, "YYYY-MM (default this month)");
  report->add_option("--by", o.by, "node (default), pool, model, region or total");
  report->add_option("--price-factor", o.price_factor, "what if prices were this many times");
  report->add_option("--utilisation", o.utilisation, "what if utilisation were this (0 to 1)");
  report->add_flag("--csv", o.csv, "as CSV");
  report->callback([&action, &o] {
    auto target = [&o] {
      const std::string format = o.csv ? "csv" : "";
      return "/v1/finance/report" + query({{"month", &o.month},
                                           {"by", &o.by},
                                           {"price_factor", &o.price_factor},
                                           {"utilisation", &o.utilisation},
                                           {"format", &format}});
    };
    action = o.csv ? show_text(target)
                   : show_report(target, "groups", kReportColumns, "totals", percent_rows);
  });
  CLI::App* payback = finance.add_subcommand("payback", "when each asset pays back its cost");
  payback->add_option("--month", o.month, "through this month (YYYY-MM; default this month)");
  payback->callback([&action, &o] {
    action = show_report([&o] { return "/v1/finance/payback" + query({{"month", &o.month}}); },
                         "items", kPaybackColumns);
  });
  CLI::App* rent = finance.add_subcommand("buy-or-rent", "owned GPUs' costs against renting");
  rent->add_option("--month", o.month, "YYYY-MM (default this month)");
  rent->add_flag("--csv", o.csv, "as CSV");
  rent->callback([&action, &o] {
    auto target = [&o] {
      const std::string format = o.csv ? "csv" : "";
      return "/v1/finance/buy-or-rent" + query({{"month", &o.month}, {"format", &format}});
    };
    action = o.csv ? show_text(target)
                   : show_report(target, "items", kRentOrBuyColumns, nullptr, rent_rows);
  });
}

}  // namespace

void add_finance_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.
  CLI::App* finance = add_group(app, "finance", "the operator's books (operator admins)");
  add_asset_commands(*finance, action, o);
  add_site_commands(*finance, action, o);
  add_cost_commands(*finance, action);
  add_report_commands(*finance, action, o);
}

}  // namespace allot::cli
