#include "store/finance_json.h"

#include <string>

namespace allot {
namespace {

using nlohmann::json;

json steps_document(const std::vector<RatePoint>& steps) {
  json out = json::array();
  for (const RatePoint& step : steps) {
    out.push_back({{"from_ms", step.from_ms}, {"value", step.value}});
  }
  return out;
}

std::vector<RatePoint> steps_from(const json& doc) {
  std::vector<RatePoint> out;
  for (const json& step : doc) out.push_back(RatePoint{step.at("from_ms"), step.at("value")});
  return out;
}

// Runs `read`; a missing or mistyped field is an internal error naming the kind of object.
template <typename T, typename Fn>
Result<T> read_document(std::string_view what, Fn read) {
  try {
    return read();
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal,
                std::string("a stored ") + std::string(what) + " is malformed: " + e.what());
  }
}

}  // namespace

json asset_document(const finance::Asset& a) {
  json changes = json::array();
  for (const finance::EstimateChange& c : a.changes) {
    changes.push_back({{"from_month_ms", c.from_month_ms},
                       {"life_months", c.life_months},
                       {"salvage_micros", c.salvage_micros}});
  }
  const finance::Financing& f = a.financing;
  return {{"id", a.id},
          {"name", a.name},
          {"node_ids", a.node_ids},
          {"cost_micros", a.cost_micros},
          {"in_service_ms", a.in_service_ms},
          {"life_months", a.life_months},
          {"salvage_micros", a.salvage_micros},
          {"method", finance::method_name(a.method)},
          {"declining_factor_milli", a.declining_factor_milli},
          {"changes", changes},
          {"retired_ms", a.retired_ms},
          {"retirement_proceeds_micros", a.retirement_proceeds_micros},
          {"financing",
           {{"kind", finance::financing_kind_name(f.kind)},
            {"principal_micros", f.principal_micros},
            {"annual_rate_ppm", f.annual_rate_ppm},
            {"term_months", f.term_months},
            {"monthly_payment_micros", f.monthly_payment_micros},
            {"start_month_ms", f.start_month_ms}}},
          {"power_kw_milli", a.power_kw_milli},
          {"created_at_ms", a.created_at_ms}};
}

Result<finance::Asset> asset_from_document(const json& d) {
  return read_document<finance::Asset>("asset", [&] {
    const json& f = d.at("financing");
    finance::Asset a{
        .id = d.at("id"),
        .name = d.at("name"),
        .node_ids = d.at("node_ids").get<std::vector<std::string>>(),
        .cost_micros = d.at("cost_micros"),
        .in_service_ms = d.at("in_service_ms"),
        .life_months = d.at("life_months"),
        .salvage_micros = d.at("salvage_micros"),
        .method = finance::parse_method(d.at("method").get<std::string>())
                      .value_or(finance::Method::kStraightLine),
        .declining_factor_milli = d.at("declining_factor_milli"),
        .retired_ms = d.at("retired_ms"),
        .retirement_proceeds_micros = d.at("retirement_proceeds_micros"),
        .financing = {.kind = finance::parse_financing_kind(f.at("kind").get<std::string>())
                                  .value_or(finance::FinancingKind::kCash),
                      .principal_micros = f.at("principal_micros"),
                      .annual_rate_ppm = f.at("annual_rate_ppm"),
                      .term_months = f.at("term_months"),
                      .monthly_payment_micros = f.at("monthly_payment_micros"),
                      .start_month_ms = f.at("start_month_ms")},
        .power_kw_milli = d.at("power_kw_milli"),
        .created_at_ms = d.at("created_at_ms")};
    for (const json& c : d.at("changes")) {
      a.changes.push_back(finance::EstimateChange{c.at("from_month_ms"), c.at("life_months"),
                                                  c.at("salvage_micros")});
    }
    return a;
  });
}

json site_document(const Site& s) {
  return {{"region", s.region},
          {"pue_milli", s.pue_milli},
          {"colocation_micros_per_kw_month", s.colocation_micros_per_kw_month},
          {"power_micros_per_kwh", steps_document(s.power_micros_per_kwh)},
          {"carbon_g_per_kwh", steps_document(s.carbon_g_per_kwh)}};
}

Result<Site> site_from_document(const json& d) {
  return read_document<Site>("site", [&] {
    return Site{.region = d.at("region"),
                .pue_milli = d.at("pue_milli"),
                .colocation_micros_per_kw_month = d.at("colocation_micros_per_kw_month"),
                .power_micros_per_kwh = steps_from(d.at("power_micros_per_kwh")),
                .carbon_g_per_kwh = steps_from(d.at("carbon_g_per_kwh"))};
  });
}

json fixed_cost_document(const FixedCost& c) {
  return {{"id", c.id},
          {"name", c.name},
          {"monthly_micros", c.monthly_micros},
          {"region", c.region},
          {"rule", allocation_rule_name(c.rule)},
          {"from_month_ms", c.from_month_ms},
          {"until_month_ms", c.until_month_ms},
          {"created_at_ms", c.created_at_ms},
          {"deleted_at_ms", c.deleted_at_ms}};
}

Result<FixedCost> fixed_cost_from_document(const json& d) {
  return read_document<FixedCost>("fixed cost", [&] {
    return FixedCost{.id = d.at("id"),
                     .name = d.at("name"),
                     .monthly_micros = d.at("monthly_micros"),
                     .region = d.at("region"),
                     .rule = parse_allocation_rule(d.at("rule").get<std::string>())
                                 .value_or(AllocationRule::kPerNode),
                     .from_month_ms = d.at("from_month_ms"),
                     .until_month_ms = d.at("until_month_ms"),
                     .created_at_ms = d.at("created_at_ms"),
                     .deleted_at_ms = d.at("deleted_at_ms")};
  });
}

json rental_price_document(const RentalPrice& p) {
  return {{"provider", p.provider},
          {"gpu_model", p.gpu_model},
          {"micros_per_gpu_hour", p.micros_per_gpu_hour},
          {"updated_at_ms", p.updated_at_ms}};
}

Result<RentalPrice> rental_price_from_document(const json& d) {
  return read_document<RentalPrice>("rental price", [&] {
    return RentalPrice{.provider = d.at("provider"),
                       .gpu_model = d.at("gpu_model"),
                       .micros_per_gpu_hour = d.at("micros_per_gpu_hour"),
                       .updated_at_ms = d.at("updated_at_ms")};
  });
}

}  // namespace allot
