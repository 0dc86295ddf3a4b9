// The operator's assets through the API: what each server or batch cost, how it depreciates and
// how it was paid for, with the month-by-month schedules (as JSON or CSV), changes of estimate and
// retirement. Only operator admins read or change them: they are the operator's own accounts.
#include <fmt/format.h>

#include <climits>
#include <map>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/books.h"
#include "api/routes_util.h"
#include "core/kernel/validate.h"
#include "finance/schedule.h"

namespace allot::finance {

// The listing's form of an asset (page_of finds it by the object's type).
static nlohmann::json to_json(const Asset& asset);

}  // namespace allot::finance

namespace allot {
namespace {

using nlohmann::json;

json financing_json(const finance::Financing& f, TimeMs in_service_ms) {
  // A loan's payment follows from its terms; show it, since that is what the operator pays.
  const int64_t payment =
      f.kind == finance::FinancingKind::kLoan
          ? finance::loan_payment(f.principal_micros, f.annual_rate_ppm, f.term_months)
          : f.monthly_payment_micros;
  json out{{"kind", finance::financing_kind_name(f.kind)},
           {"principal", money_text(f.principal_micros)},
           {"annual_rate", format_scaled(f.annual_rate_ppm, 6)},
           {"term_months", f.term_months},
           {"monthly_payment", money_text(payment)},
           {"start_month", nullptr}};
  if (f.kind != finance::FinancingKind::kCash) {
    out["start_month"] = format_month(f.start_month_ms != 0 ? f.start_month_ms : in_service_ms);
  }
  return out;
}

json month_json(const finance::DepreciationMonth& m) {
  return {{"month", format_month(m.month_ms)},
          {"depreciation", money_text(m.depreciation_micros)},
          {"book_end", money_text(m.book_end_micros)},
          {"retirement_loss", money_text(m.retirement_loss_micros)}};
}

json month_json(const finance::FinancingMonth& m) {
  return {{"month", format_month(m.month_ms)},
          {"payment", money_text(m.payment_micros)},
          {"interest", money_text(m.interest_micros)},
          {"principal", money_text(m.principal_micros)},
          {"balance_end", money_text(m.balance_end_micros)},
          {"lease", money_text(m.lease_micros)}};
}

// A schedule, one object a month.
template <typename Month>
json schedule_json(const std::vector<Month>& months) {
  json out = json::array();
  for (const Month& m : months) out.push_back(month_json(m));
  return out;
}

json asset_with_schedules(const finance::Asset& asset) {
  json out = to_json(asset);
  out["schedules"] = {{"depreciation", schedule_json(finance::depreciation_schedule(asset))},
                      {"financing", schedule_json(finance::financing_schedule(
                                        asset.financing, asset.in_service_ms))}};
  return out;
}

// One row per month that either schedule holds; a schedule without the month leaves its cells
// empty.
std::string schedules_csv(const finance::Asset& asset) {
  std::map<TimeMs, std::vector<std::string>> rows;
  auto row = [&rows](TimeMs month_ms) -> std::vector<std::string>& {
    auto [it, added] = rows.try_emplace(month_ms, std::vector<std::string>(9));
    if (added) it->second[0] = format_month(month_ms);
    return it->second;
  };
  for (const finance::DepreciationMonth& m : finance::depreciation_schedule(asset)) {
    std::vector<std::string>& r = row(m.month_ms);
    r[1] = money_text(m.depreciation_micros);
    r[2] = money_text(m.book_end_micros);
    r[3] = money_text(m.retirement_loss_micros);
  }
  for (const finance::FinancingMonth& m :
       finance::financing_schedule(asset.financing, asset.in_service_ms)) {
    std::vector<std::string>& r = row(m.month_ms);
    r[4] = money_text(m.payment_micros);
    r[5] = money_text(m.interest_micros);
    r[6] = money_text(m.principal_micros);
    r[7] = money_text(m.balance_end_micros);
    r[8] = money_text(m.lease_micros);
  }
  std::string out = csv_line({"month", "depreciation", "book_end", "retirement_loss", "payment",
                              "interest", "principal", "balance_end", "lease"});
  for (const auto& [month, cells] : rows) out += csv_line(cells);
  return out;
}

// A node named by its id or by its name. An unknown one is passed on as it is, so that the core
// refuses it by the name the caller gave.
std::string node_id_of(const State& state, const std::string& ref) {
  if (state.node(ref) != nullptr) return ref;
  for (const auto& [id, node] : state.nodes) {
    if (node.name == ref) return id;
  }
  return ref;
}

// The body's "financing" object, read as strictly as the body; absent: cash.
Result<finance::Financing> read_financing(const json& doc) {
  finance::Financing f;
  if (doc.is_null()) return f;
  if (!doc.is_object()) return fail(ErrorCode::kInvalidType, "'financing' must be an object");
  JsonBody body(doc.dump());
  const std::string kind = body.required_string("kind");
  auto [principal, rate] = body.optional_string_fields({"principal", "annual_rate"});
  auto term = body.optional_int("term_months", INT_MIN, INT_MAX);
  auto [payment, start] = body.optional_string_fields({"monthly_payment", "start_month"});
  if (auto ok = body.finish(); !ok) {
    return fail(ok.error().code, "financing: " + ok.error().message);
  }
  auto parsed_kind = finance::parse_financing_kind(kind);
  if (!parsed_kind) {
    return fail(ErrorCode::kInvalidArgument, "financing 'kind' must be cash, loan or lease");
  }
  f.kind = *parsed_kind;
  f.term_months = static_cast<int>(term.value_or(0));
  if (principal) ALLOT_TRY_ASSIGN(f.principal_micros, read_money("principal", *principal));
  if (rate) ALLOT_TRY_ASSIGN(f.annual_rate_ppm, parse_scaled("annual_rate", *rate, 6));
  if (payment) ALLOT_TRY_ASSIGN(f.monthly_payment_micros, read_money("monthly_payment", *payment));
  if (start) ALLOT_TRY_ASSIGN(f.start_month_ms, read_month("start_month", *start));
  return f;
}

// The fields of a new asset from the body; the core checks the books' rules on them.
Result<finance::Asset> read_asset(const Call& call) {
  JsonBody body(call.request.body);
  finance::Asset a{.name = body.required_string("name")};
  auto nodes = body.optional_strings("nodes");
  const auto [cost, in_service] = body.required_string_fields({"cost", "in_service"});
  auto life = body.optional_int("life_months", INT_MIN, INT_MAX);
  auto [salvage, method, factor, power] =
      body.optional_string_fields({"salvage", "method", "declining_factor", "power_kw"});
  const json financing = body.optional_json("financing");
  ALLOT_TRY(body.finish());
  if (!nodes) return fail(ErrorCode::kMissingField, "'nodes' is required");
  if (!life) return fail(ErrorCode::kMissingField, "'life_months' is required");
  for (const std::string& ref : *nodes) a.node_ids.push_back(node_id_of(call.ctx.state(), ref));
  a.life_months = static_cast<int>(*life);
  ALLOT_TRY_ASSIGN(a.cost_micros, read_money("cost", cost));
  ALLOT_TRY_ASSIGN(a.in_service_ms, read_time("in_service", in_service));
  if (salvage) ALLOT_TRY_ASSIGN(a.salvage_micros, read_money("salvage", *salvage));
  if (method) {
    auto parsed = finance::parse_method(*method);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument,
                  "'method' must be straight_line or declining_balance");
    }
    a.method = *parsed;
  }
  if (factor) {
    ALLOT_TRY_ASSIGN(a.declining_factor_milli, parse_scaled("declining_factor", *factor, 3));
  }
  if (power) ALLOT_TRY_ASSIGN(a.power_kw_milli, parse_scaled("power_kw", *power, 3));
  ALLOT_TRY_ASSIGN(a.financing, read_financing(financing));
  return a;
}

Result<HttpResponse> create_asset(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(finance::Asset asset, read_asset(call));
  asset.id = call.ctx.ids().new_id("ast");
  ALLOT_TRY(call.ctx.apply(CreateAsset{.asset = asset}));
  call.target_id = asset.id;
  return json_reply(201, asset_with_schedules(call.ctx.state().books.assets.at(asset.id)));
}

Result<HttpResponse> list_assets(Call& call) {
  return list_for_operator(call, call.ctx.state().books.assets);
}

// The asset the path names; kInvalidId for what cannot be an asset's id, kNotFound otherwise.
Result<const finance::Asset*> path_asset(const Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("asset id", id, "ast"));
  const auto& assets = call.ctx.state().books.assets;
  auto it = assets.find(id);
  if (it == assets.end()) return fail(ErrorCode::kNotFound, fmt::format("no asset {}", id));
  return &it->second;
}

Result<HttpResponse> get_asset(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(allow_query(call.target, {"format"}));
  ALLOT_TRY_LET(const finance::Asset* asset, path_asset(call));
  auto format = call.target.query.find("format");
  const std::string chosen = format == call.target.query.end() ? "json" : format->second;
  if (chosen == "json") return json_reply(200, asset_with_schedules(*asset));
  if (chosen == "csv") return csv_reply(schedules_csv(*asset));
  return fail(ErrorCode::kInvalidArgument, "format must be json or csv");
}

// POST /v1/finance/assets/{id}/estimates {"from_month", "life_months", "salvage"?}: salvage
// defaults to the one in force, so that a change of life alone keeps it.
Result<HttpResponse> change_estimate(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  const std::string from = body.required_string("from_month");
  auto life = body.optional_int("life_months", INT_MIN, INT_MAX);
  auto salvage = body.optional_string("salvage");
  ALLOT_TRY(body.finish());
  if (!life) return fail(ErrorCode::kMissingField, "'life_months' is required");
  ALLOT_TRY_LET(const finance::Asset* asset, path_asset(call));
  const finance::Asset& a = *asset;
  finance::EstimateChange change{
      .life_months = static_cast<int>(*life),
      .salvage_micros = a.changes.empty() ? a.salvage_micros : a.changes.back().salvage_micros};
  ALLOT_TRY_ASSIGN(change.from_month_ms, read_month("from_month", from));
  if (salvage) ALLOT_TRY_ASSIGN(change.salvage_micros, read_money("salvage", *salvage));
  ALLOT_TRY(call.ctx.apply(ChangeAssetEstimate{.asset_id = a.id, .change = change}));
  return json_reply(200, asset_with_schedules(call.ctx.state().books.assets.at(a.id)));
}

// POST /v1/finance/assets/{id}/retire {"at"?, "proceeds"?}: taken out of service (default now).
Result<HttpResponse> retire_asset(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  auto [at, proceeds] = body.optional_string_fields({"at", "proceeds"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const finance::Asset* asset, path_asset(call));
  RetireAsset retire{.asset_id = asset->id};
  if (at) ALLOT_TRY_ASSIGN(retire.retired_ms, read_time("at", *at));
  if (proceeds) ALLOT_TRY_ASSIGN(retire.proceeds_micros, read_money("proceeds", *proceeds));
  ALLOT_TRY(call.ctx.apply(retire));
  return json_reply(200, asset_with_schedules(call.ctx.state().books.assets.at(retire.asset_id)));
}

constexpr Resource kResources[] = {
    {.path = "/v1/finance/assets", .create = create_asset, .list = list_assets, .get = get_asset},
};

constexpr Route kActions[] = {
    {"POST", "/v1/finance/assets/{id}/estimates", change_estimate},
    {"POST", "/v1/finance/assets/{id}/retire", retire_asset},
};

}  // namespace

std::span<const Route> finance_asset_routes() { return route_table<kResources, kActions>(); }

}  // namespace allot

namespace allot::finance {

static nlohmann::json to_json(const Asset& a) {
  nlohmann::json changes = nlohmann::json::array();
  for (const EstimateChange& c : a.changes) {
    changes.push_back({{"from_month", format_month(c.from_month_ms)},
                       {"life_months", c.life_months},
                       {"salvage", money_text(c.salvage_micros)}});
  }
  return {{"id", a.id},
          {"name", a.name},
          {"node_ids", a.node_ids},
          {"cost", money_text(a.cost_micros)},
          {"in_service", format_time(a.in_service_ms)},
          {"life_months", a.life_months},
          {"salvage", money_text(a.salvage_micros)},
          {"method", method_name(a.method)},
          {"declining_factor", format_scaled(a.declining_factor_milli, 3)},
          {"power_kw", format_scaled(a.power_kw_milli, 3)},
          {"changes", changes},
          {"retired_at", allot::time_or_null(a.retired_ms)},
          {"retirement_proceeds", money_text(a.retirement_proceeds_micros)},
          {"financing", allot::financing_json(a.financing, a.in_service_ms)},
          {"created_at", format_time(a.created_at_ms)}};
}

}  // namespace allot::finance
