#include "store/finance_json.h"

#include "common/document.h"

namespace allot {

namespace finance {

static void to_json(nlohmann::json& doc, Method m) { doc = method_name(m); }
static void from_json(const nlohmann::json& doc, Method& m) { read_name(doc, m, parse_method); }
static void to_json(nlohmann::json& doc, FinancingKind k) { doc = financing_kind_name(k); }
static void from_json(const nlohmann::json& doc, FinancingKind& k) {
  read_name(doc, k, parse_financing_kind);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EstimateChange, from_month_ms, life_months, salvage_micros)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Financing, kind, principal_micros, annual_rate_ppm, term_months,
                                   monthly_payment_micros, start_month_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Asset, id, name, node_ids, cost_micros, in_service_ms,
                                   life_months, salvage_micros, method, declining_factor_milli,
                                   changes, retired_ms, retirement_proceeds_micros, financing,
                                   power_kw_milli, created_at_ms)

}  // namespace finance

using nlohmann::json;

static void to_json(json& doc, AllocationRule r) { doc = allocation_rule_name(r); }
static void from_json(const json& doc, AllocationRule& r) {
  read_name(doc, r, parse_allocation_rule);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RatePoint, from_ms, value)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Site, region, pue_milli, colocation_micros_per_kw_month,
                                   power_micros_per_kwh, carbon_g_per_kwh)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FixedCost, id, name, monthly_micros, region, rule, from_month_ms,
                                   until_month_ms, created_at_ms, deleted_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RentalPrice, provider, gpu_model, micros_per_gpu_hour,
                                   updated_at_ms)

json asset_document(const finance::Asset& a) { return a; }
json site_document(const Site& s) { return s; }
json fixed_cost_document(const FixedCost& c) { return c; }
json rental_price_document(const RentalPrice& p) { return p; }

Result<finance::Asset> asset_from_document(const json& d) {
  return from_document<finance::Asset>(d, "asset");
}
Result<Site> site_from_document(const json& d) { return from_document<Site>(d, "site"); }
Result<FixedCost> fixed_cost_from_document(const json& d) {
  return from_document<FixedCost>(d, "fixed cost");
}
Result<RentalPrice> rental_price_from_document(const json& d) {
  return from_document<RentalPrice>(d, "rental price");
}

}  // namespace allot
