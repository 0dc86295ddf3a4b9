// The rest of the operator's books through the API: each region's PUE, colocation price, energy
// price and grid intensity; fixed monthly costs; and public cloud rental prices. Operator admins
// only, like the assets.
#include <fmt/format.h>

#include <climits>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/books.h"
#include "api/routes_util.h"
#include "core/kernel/validate.h"

namespace allot {

// The listings' forms (page_of finds them by the object's type).
static nlohmann::json to_json(const Site& site);
static nlohmann::json to_json(const FixedCost& cost);
static nlohmann::json to_json(const RentalPrice& price);

namespace {

using nlohmann::json;

json steps_json(const std::vector<RatePoint>& steps, const char* name, bool money) {
  json out = json::array();
  for (const RatePoint& step : steps) {
    out.push_back({{"from", format_time(step.from_ms)},
                   {name, money ? json(money_text(step.value)) : json(step.value)}});
  }
  return out;
}

// PUT /v1/finance/sites/{region} {"pue"?, "colocation_per_kw_month"?}: what is left out stays.
Result<HttpResponse> set_site(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  auto [pue, colocation] = body.optional_string_fields({"pue", "colocation_per_kw_month"});
  ALLOT_TRY(body.finish());
  SetSite command{.region = call.params.front()};
  if (pue) ALLOT_TRY_ASSIGN(command.pue_milli, parse_scaled("pue", *pue, 3));
  if (colocation) {
    ALLOT_TRY_ASSIGN(command.colocation_micros_per_kw_month,
                     read_money("colocation_per_kw_month", *colocation));
  }
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, to_json(*call.ctx.state().books.site(command.region)));
}

// A new step of a region's energy price or grid intensity, from `from` (default now) on.
Result<HttpResponse> add_rate(Call& call, SiteRate rate, const std::optional<std::string>& from,
                              int64_t value) {
  AddSiteRate command{.region = call.params.front(), .rate = rate, .point = {.value = value}};
  if (from) ALLOT_TRY_ASSIGN(command.point.from_ms, read_time("from", *from));
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(201, to_json(*call.ctx.state().books.site(command.region)));
}

// POST /v1/finance/sites/{region}/power-prices {"from"?, "price_per_kwh"}.
Result<HttpResponse> add_power_price(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  auto from = body.optional_string("from");
  const std::string price = body.required_string("price_per_kwh");
  ALLOT_TRY(body.finish());
  int64_t micros = 0;
  ALLOT_TRY_ASSIGN(micros, read_money("price_per_kwh", price));
  return add_rate(call, SiteRate::kPowerPrice, from, micros);
}

// POST /v1/finance/sites/{region}/carbon {"from"?, "g_per_kwh"}: whole grams CO2e per kWh.
Result<HttpResponse> add_carbon(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  auto from = body.optional_string("from");
  auto grams = body.optional_int("g_per_kwh", INT_MIN, INT_MAX);
  ALLOT_TRY(body.finish());
  if (!grams) return fail(ErrorCode::kMissingField, "'g_per_kwh' is required");
  return add_rate(call, SiteRate::kCarbonIntensity, from, *grams);
}

Result<HttpResponse> list_sites(Call& call) {
  return list_for_operator(call, call.ctx.state().books.sites);
}

// The fields of a new fixed cost; the core checks the rules on them.
Result<FixedCost> read_fixed_cost(const Call& call) {
  JsonBody body(call.request.body);
  FixedCost cost{.name = body.required_string("name")};
  const std::string monthly = body.required_string("monthly");
  cost.region = body.optional_string("region").value_or("");
  auto [rule, from, until] = body.optional_string_fields({"rule", "from_month", "until_month"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY_ASSIGN(cost.monthly_micros, read_money("monthly", monthly));
  if (rule) {
    auto parsed = parse_allocation_rule(*rule);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument,
                  "'rule' must be per_node, per_gpu, by_cost or by_power");
    }
    cost.rule = *parsed;
  }
  if (from) ALLOT_TRY_ASSIGN(cost.from_month_ms, read_month("from_month", *from));
  if (until) ALLOT_TRY_ASSIGN(cost.until_month_ms, read_month("until_month", *until));
  return cost;
}

Result<HttpResponse> create_fixed_cost(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(FixedCost cost, read_fixed_cost(call));
  cost.id = call.ctx.ids().new_id("fxc");
  ALLOT_TRY(call.ctx.apply(AddFixedCost{.cost = cost}));
  call.target_id = cost.id;
  return json_reply(201, to_json(call.ctx.state().books.fixed_costs.at(cost.id)));
}

Result<HttpResponse> list_fixed_costs(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"include_deleted"}));
  const bool deleted = call.target.query.contains("include_deleted") &&
                       call.target.query.at("include_deleted") != "false";
  return page_of(call.ctx.state().books.fixed_costs, page,
                 [deleted](const FixedCost& c) { return deleted || c.deleted_at_ms == 0; });
}

Result<HttpResponse> delete_fixed_cost(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("fixed cost id", id, "fxc"));
  ALLOT_TRY(call.ctx.apply(DeleteFixedCost{.id = id}));
  return json_reply(200, to_json(call.ctx.state().books.fixed_costs.at(id)));
}

// PUT /v1/finance/rental-prices {"provider", "gpu_model", "price_per_gpu_hour"}: one price per
// provider and model, so a second PUT replaces it.
Result<HttpResponse> set_rental_price(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  RentalPrice price{.provider = body.required_string("provider"),
                    .gpu_model = body.required_string("gpu_model")};
  const std::string text = body.required_string("price_per_gpu_hour");
  ALLOT_TRY(body.finish());
  ALLOT_TRY_ASSIGN(price.micros_per_gpu_hour, read_money("price_per_gpu_hour", text));
  ALLOT_TRY(call.ctx.apply(SetRentalPrice{.price = price}));
  return json_reply(200, to_json(call.ctx.state().books.rental_prices.at(price.key())));
}

Result<HttpResponse> list_rental_prices(Call& call) {
  return list_for_operator(call, call.ctx.state().books.rental_prices);
}

constexpr Resource kResources[] = {
    {.path = "/v1/finance/sites", .list = list_sites},
    {.path = "/v1/finance/costs",
     .create = create_fixed_cost,
     .list = list_fixed_costs,
     .remove = delete_fixed_cost},
    {.path = "/v1/finance/rental-prices", .put = set_rental_price, .list = list_rental_prices},
};

// A site is set by its region, and its rates added under it.
constexpr Route kSiteRoutes[] = {
    {"PUT", "/v1/finance/sites/{region}", set_site},
    {"POST", "/v1/finance/sites/{region}/power-prices", add_power_price},
    {"POST", "/v1/finance/sites/{region}/carbon", add_carbon},
};

}  // namespace

std::span<const Route> finance_book_routes() { return route_table<kResources, kSiteRoutes>(); }

static nlohmann::json to_json(const Site& s) {
  return {{"region", s.region},
          {"pue", format_scaled(s.pue_milli, 3)},
          {"colocation_per_kw_month", money_text(s.colocation_micros_per_kw_month)},
          {"power_prices", steps_json(s.power_micros_per_kwh, "price_per_kwh", true)},
          {"carbon", steps_json(s.carbon_g_per_kwh, "g_per_kwh", false)}};
}

static nlohmann::json to_json(const FixedCost& c) {
  auto month_or_null = [](TimeMs month_ms) {
    return month_ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(format_month(month_ms));
  };
  return {{"id", c.id},
          {"name", c.name},
          {"monthly", money_text(c.monthly_micros)},
          {"region", c.region.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.region)},
          {"rule", allocation_rule_name(c.rule)},
          {"from_month", month_or_null(c.from_month_ms)},
          {"until_month", month_or_null(c.until_month_ms)},
          {"created_at", format_time(c.created_at_ms)},
          {"deleted_at", c.deleted_at_ms == 0 ? nlohmann::json(nullptr)
                                              : nlohmann::json(format_time(c.deleted_at_ms))}};
}

static nlohmann::json to_json(const RentalPrice& p) {
  return {{"provider", p.provider},
          {"gpu_model", p.gpu_model},
          {"price_per_gpu_hour", money_text(p.micros_per_gpu_hour)},
          {"updated_at", format_time(p.updated_at_ms)}};
}

}  // namespace allot
