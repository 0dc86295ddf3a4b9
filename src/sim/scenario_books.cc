// The scenario's books: what each region's sites cost and emit, the assets with their financing,
// fixed costs, rental prices, and the events that change them. Money is read with Money and ratios
// as exact decimals into whole numbers (milli, ppm), so no amount passes through floating point.
#include "sim/scenario_books.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/clock.h"
#include "common/limits.h"
#include "core/kernel/gpu_models.h"

namespace allot::sim {

using nlohmann::json;

namespace {

constexpr int64_t kMaxGramsPerKwh = 100'000;

// A list of {at, <value_key>} steps, in strictly increasing time, at start_ms + at.
Result<std::vector<RatePoint>> rates_at(const Fields& f, std::string_view key,
                                        std::string_view value_key, bool money, TimeMs start_ms) {
  std::vector<RatePoint> out;
  if (f.has(key) && !f.doc().at(key).is_array()) {
    return std::unexpected(bad(f.at(key), "must be a list"));
  }
  auto ok = each_of(f.doc(), key, [&](const json& doc, size_t i) -> Status {
    const Fields r(doc, fmt::format("{}[{}]", f.at(key), i));
    if (!doc.is_object()) return std::unexpected(bad(r.where(), "must be an object"));
    TRY(at, r.integer("at", 0, 0, kMaxSeconds));
    TRY(value,
        money ? r.amount(value_key, true) : r.integer(value_key, std::nullopt, 0, kMaxGramsPerKwh));
    const TimeMs from_ms = start_ms + at * 1000;
    if (!out.empty() && from_ms <= out.back().from_ms) {
      return std::unexpected(bad(r.at("at"), "must come after the step before"));
    }
    out.push_back({.from_ms = from_ms, .value = value});
    return {};
  });
  if (!ok) return std::unexpected(ok.error());
  return out;
}

Result<Site> site_at(const json& doc, size_t index, TimeMs start_ms) {
  const Fields f(doc, fmt::format("sites[{}]", index));
  if (!doc.is_object()) return std::unexpected(bad(f.where(), "must be an object"));
  TRY(region, f.text("region"));
  TRY(pue, f.scaled("pue", 3, 1000));
  if (pue < 1000 || pue > limits::kMaxPueMilli) {
    return std::unexpected(bad(f.at("pue"), "must be at least 1 and at most 5"));
  }
  TRY(colocation, f.amount("colocation_per_kw_month", true));
  TRY(power, rates_at(f, "power_prices", "price_per_kwh", true, start_ms));
  TRY(carbon, rates_at(f, "carbon", "g_per_kwh", false, start_ms));
  return Site{.region = region,
              .pue_milli = pue,
              .colocation_micros_per_kw_month = colocation,
              .power_micros_per_kwh = power,
              .carbon_g_per_kwh = carbon};
}

// Fields that a kind of financing does not take must be absent, so that a typo in the kind does
// not silently drop a loan's terms.
Status absent(const Fields& f, std::initializer_list<std::string_view> keys, std::string_view why) {
  for (std::string_view key : keys) {
    if (f.has(key)) return std::unexpected(bad(f.at(key), why));
  }
  return {};
}

Result<finance::Financing> financing_at(const Fields& f) {
  using finance::FinancingKind;
  if (!f.doc().is_object()) return std::unexpected(bad(f.where(), "must be an object"));
  TRY(kind_name, f.text("kind", "cash"));
  const auto kind = finance::parse_financing_kind(kind_name);
  if (!kind) return std::unexpected(bad(f.at("kind"), "must be cash, loan or lease"));
  finance::Financing out{.kind = *kind};
  if (*kind == FinancingKind::kCash) {
    if (auto ok = absent(f, {"principal", "annual_rate", "term_months", "monthly_payment"},
                         "cash takes no loan or lease terms");
        !ok) {
      return std::unexpected(ok.error());
    }
    return out;
  }
  TRY(term, f.integer("term_months", std::nullopt, 1, limits::kMaxLifeMonths));
  out.term_months = static_cast<int>(term);
  if (*kind == FinancingKind::kLease) {
    if (auto ok = absent(f, {"principal", "annual_rate"}, "a lease takes no principal or rate");
        !ok) {
      return std::unexpected(ok.error());
    }
    TRY(payment, f.amount("monthly_payment"));
    out.monthly_payment_micros = payment;
    return out;
  }
  if (auto ok = absent(f, {"monthly_payment"}, "a loan's payment follows from its terms"); !ok) {
    return std::unexpected(ok.error());
  }
  TRY(principal, f.amount("principal"));
  TRY(rate, f.scaled("annual_rate", 6, 0));
  if (rate > limits::kMaxAnnualRatePpm) {
    return std::unexpected(bad(f.at("annual_rate"), "must be a fraction a year from 0 to 1"));
  }
  out.principal_micros = principal;
  out.annual_rate_ppm = rate;
  return out;
}

// The asset's nodes, by the scenario's node names.
Result<std::vector<std::string>> asset_nodes_at(const Fields& f, const Scenario& s) {
  if (!f.has("nodes") || !f.doc().at("nodes").is_array() || f.doc().at("nodes").empty()) {
    return std::unexpected(bad(f.at("nodes"), "must be a list of at least one node name"));
  }
  std::set<std::string> known;
  for (const ScenarioNode& n : s.nodes) known.insert(n.name);
  std::vector<std::string> out;
  const json& nodes = f.doc().at("nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string where = fmt::format("{}[{}]", f.at("nodes"), i);
    if (!nodes[i].is_string()) return std::unexpected(bad(where, "must be a node name"));
    const std::string name = nodes[i].get<std::string>();
    if (!known.contains(name)) return std::unexpected(bad(where, "unknown node " + name));
    if (std::ranges::find(out, name) != out.end()) {
      return std::unexpected(bad(where, "names node " + name + " twice"));
    }
    out.push_back(name);
  }
  return out;
}

Result<finance::Asset> asset_at(const json& doc, size_t index, const Scenario& s) {
  const Fields f(doc, fmt::format("assets[{}]", index));
  if (!doc.is_object()) return std::unexpected(bad(f.where(), "must be an object"));
  finance::Asset a;
  TRY(name, f.text("name"));
  TRY(nodes, asset_nodes_at(f, s));
  TRY(cost, f.amount("cost"));
  TRY(in_service, f.text("in_service", format_time(s.start_ms)));
  const auto in_service_ms = parse_time(in_service);
  if (!in_service_ms || *in_service_ms <= 0) {
    return std::unexpected(bad(f.at("in_service"), "must be an RFC 3339 time in UTC"));
  }
  TRY(life, f.integer("life_months", std::nullopt, 1, limits::kMaxLifeMonths));
  TRY(salvage, f.amount("salvage", true));
  if (salvage > cost) return std::unexpected(bad(f.at("salvage"), "must not be above the cost"));
  TRY(method_name, f.text("method", "straight_line"));
  const auto method = finance::parse_method(method_name);
  if (!method) {
    return std::unexpected(bad(f.at("method"), "must be straight_line or declining_balance"));
  }
  TRY(factor, f.scaled("declining_factor", 3, 2000));
  if (factor == 0 || factor > limits::kMaxDecliningFactorMilli) {
    return std::unexpected(bad(f.at("declining_factor"), "must be above 0 and at most 10"));
  }
  TRY(power, f.scaled("power_kw", 3, 0));
  if (f.has("financing")) {
    TRY(financing, financing_at(Fields(doc.at("financing"), f.at("financing"))));
    a.financing = financing;
  }
  a.name = name;
  a.node_ids = nodes;
  a.cost_micros = cost;
  a.in_service_ms = *in_service_ms;
  a.life_months = static_cast<int>(life);
  a.salvage_micros = salvage;
  a.method = *method;
  a.declining_factor_milli = factor;
  a.power_kw_milli = power;
  return a;
}

Result<FixedCost> fixed_cost_at(const json& doc, size_t index) {
  const Fields f(doc, fmt::format("fixed_costs[{}]", index));
  if (!doc.is_object()) return std::unexpected(bad(f.where(), "must be an object"));
  TRY(name, f.text("name"));
  TRY(monthly, f.amount("monthly"));
  TRY(region, f.text("region", ""));
  TRY(rule_name, f.text("rule", "per_node"));
  const auto rule = parse_allocation_rule(rule_name);
  if (!rule) {
    return std::unexpected(bad(f.at("rule"), "must be per_node, per_gpu, by_cost or by_power"));
  }
  return FixedCost{.name = name, .monthly_micros = monthly, .region = region, .rule = *rule};
}

Result<RentalPrice> rental_price_at(const json& doc, size_t index) {
  const Fields f(doc, fmt::format("rental_prices[{}]", index));
  if (!doc.is_object()) return std::unexpected(bad(f.where(), "must be an object"));
  TRY(provider, f.text("provider"));
  TRY(model, f.text("gpu_model"));
  if (!is_catalog_gpu_model(model)) {
    return std::unexpected(bad(f.at("gpu_model"), "must be a catalog GPU model, e.g. H100-80GB"));
  }
  TRY(price, f.amount("price_per_gpu_hour"));
  return RentalPrice{.provider = provider, .gpu_model = model, .micros_per_gpu_hour = price};
}

}  // namespace

std::pair<int64_t, int64_t> default_gpu_power(const std::string& model) {
  const GpuPowerW power = gpu_power_w(model);
  return {power.idle_w, power.busy_w};
}

Status parse_books(const json& doc, Scenario& s) {
  std::set<std::string> regions;
  auto sites = each_of(doc, "sites", [&](const json& d, size_t i) -> Status {
    TRY(site, site_at(d, i, s.start_ms));
    if (!regions.insert(site.region).second) {
      return std::unexpected(bad(fmt::format("sites[{}].region", i), "duplicate " + site.region));
    }
    s.sites.push_back(site);
    return {};
  });
  if (!sites) return sites;
  std::set<std::string> names;
  std::map<std::string, size_t> asset_of_node;
  auto assets = each_of(doc, "assets", [&](const json& d, size_t i) -> Status {
    TRY(asset, asset_at(d, i, s));
    if (!names.insert(asset.name).second) {
      return std::unexpected(bad(fmt::format("assets[{}].name", i), "duplicate " + asset.name));
    }
    // A node's costs belong to one asset; the core refuses a second, but by its id.
    for (size_t n = 0; n < asset.node_ids.size(); ++n) {
      auto [it, added] = asset_of_node.emplace(asset.node_ids[n], i);
      if (!added) {
        return std::unexpected(
            bad(fmt::format("assets[{}].nodes[{}]", i, n),
                fmt::format("{} is in assets[{}] already", it->first, it->second)));
      }
    }
    s.assets.push_back(asset);
    return {};
  });
  if (!assets) return assets;
  auto costs = each_of(doc, "fixed_costs", [&](const json& d, size_t i) -> Status {
    TRY(cost, fixed_cost_at(d, i));
    s.fixed_costs.push_back(cost);
    return {};
  });
  if (!costs) return costs;
  return each_of(doc, "rental_prices", [&](const json& d, size_t i) -> Status {
    TRY(price, rental_price_at(d, i));
    s.rental_prices.push_back(price);
    return {};
  });
}

std::optional<Result<ScenarioEvent>> books_event_at(const Fields& f, std::string_view type,
                                                    ScenarioEvent e) {
  auto read = [&]() -> Result<ScenarioEvent> {
    if (type == "power_price" || type == "carbon") {
      const bool power = type == "power_price";
      e.kind = power ? EventKind::kPowerPrice : EventKind::kCarbon;
      TRY(region, f.text("region"));
      TRY(value, power ? f.amount("price_per_kwh", true)
                       : f.integer("g_per_kwh", std::nullopt, 0, kMaxGramsPerKwh));
      e.books.region = region;
      e.books.value = value;
      return e;
    }
    TRY(asset, f.text("asset"));
    e.books.asset = asset;
    if (type == "retire") {
      e.kind = EventKind::kRetire;
      TRY(proceeds, f.amount("proceeds", true));
      e.books.proceeds_micros = proceeds;
      return e;
    }
    e.kind = EventKind::kChangeEstimate;
    TRY(life, f.integer("life_months", std::nullopt, 1, limits::kMaxLifeMonths));
    TRY(salvage, f.amount("salvage", true));
    e.books.life_months = static_cast<int>(life);
    e.books.salvage_micros = salvage;
    return e;
  };
  if (type != "power_price" && type != "carbon" && type != "retire" && type != "change_estimate") {
    return std::nullopt;
  }
  return read();
}

Status check_books_references(const Scenario& s) {
  std::map<std::string, int64_t> cost_of;
  for (const finance::Asset& a : s.assets) cost_of[a.name] = a.cost_micros;
  for (const ScenarioEvent& e : s.events) {
    if (e.kind != EventKind::kRetire && e.kind != EventKind::kChangeEstimate) continue;
    auto it = cost_of.find(e.books.asset);
    if (it == cost_of.end()) {
      return std::unexpected(bad(e.where + ".asset", "unknown asset " + e.books.asset));
    }
    if (e.kind == EventKind::kChangeEstimate && e.books.salvage_micros > it->second) {
      return std::unexpected(bad(e.where + ".salvage", "must not be above the asset's cost"));
    }
  }
  return {};
}

std::vector<std::pair<Command, std::string>> books_commands(
    const Scenario& s, const std::function<std::string(std::string_view)>& next_id,
    const std::map<std::string, std::string>& node_ids,
    std::map<std::string, std::string>& asset_ids) {
  std::vector<std::pair<Command, std::string>> out;
  for (size_t i = 0; i < s.sites.size(); ++i) {
    const Site& site = s.sites[i];
    const std::string where = fmt::format("sites[{}] ({})", i, site.region);
    out.emplace_back(SetSite{.region = site.region,
                             .pue_milli = site.pue_milli,
                             .colocation_micros_per_kw_month = site.colocation_micros_per_kw_month},
                     where);
    for (const RatePoint& point : site.power_micros_per_kwh) {
      out.emplace_back(AddSiteRate{site.region, SiteRate::kPowerPrice, point}, where);
    }
    for (const RatePoint& point : site.carbon_g_per_kwh) {
      out.emplace_back(AddSiteRate{site.region, SiteRate::kCarbonIntensity, point}, where);
    }
  }
  for (size_t i = 0; i < s.assets.size(); ++i) {
    finance::Asset asset = s.assets[i];
    asset.id = next_id("ast");
    asset_ids[asset.name] = asset.id;
    for (std::string& node : asset.node_ids) node = node_ids.at(node);
    const std::string where = fmt::format("assets[{}] ({})", i, asset.name);
    out.emplace_back(CreateAsset{std::move(asset)}, where);
  }
  for (size_t i = 0; i < s.fixed_costs.size(); ++i) {
    FixedCost cost = s.fixed_costs[i];
    cost.id = next_id("fxc");
    const std::string where = fmt::format("fixed_costs[{}] ({})", i, cost.name);
    out.emplace_back(AddFixedCost{std::move(cost)}, where);
  }
  for (size_t i = 0; i < s.rental_prices.size(); ++i) {
    const RentalPrice& price = s.rental_prices[i];
    out.emplace_back(SetRentalPrice{price}, fmt::format("rental_prices[{}] ({})", i, price.key()));
  }
  return out;
}

std::optional<Command> books_event_command(const ScenarioEvent& e, TimeMs at_ms,
                                           const std::map<std::string, std::string>& asset_ids) {
  const BooksEvent& b = e.books;
  switch (e.kind) {
    case EventKind::kPowerPrice:
    case EventKind::kCarbon:
      return AddSiteRate{.region = b.region,
                         .rate = e.kind == EventKind::kPowerPrice ? SiteRate::kPowerPrice
                                                                  : SiteRate::kCarbonIntensity,
                         .point = {at_ms, b.value}};
    case EventKind::kRetire:
      return RetireAsset{.asset_id = asset_ids.at(b.asset),
                         .retired_ms = at_ms,
                         .proceeds_micros = b.proceeds_micros};
    case EventKind::kChangeEstimate:
      return ChangeAssetEstimate{.asset_id = asset_ids.at(b.asset),
                                 .change = {.from_month_ms = month_start(at_ms),
                                            .life_months = b.life_months,
                                            .salvage_micros = b.salvage_micros}};
    default:
      return std::nullopt;
  }
}

}  // namespace allot::sim
