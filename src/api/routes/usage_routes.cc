// Usage reports: GPU-hours and spend over a window, grouped, with the current month's forecast.
// Operator admins see every tenant; a tenant's users see their own.
#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/money.h"
#include "api/routes_util.h"
#include "common/money.h"
#include "reports/invoice_render.h"
#include "reports/usage.h"

namespace allot {
namespace {

using nlohmann::json;

std::string money(int64_t micros) { return Money::from_micros(micros).to_string(); }

Result<billing::UsageQuery> read_grouping(const Target& target, billing::UsageQuery query) {
  auto it = target.query.find("group_by");
  const std::string by = it == target.query.end() ? "tenant" : it->second;
  if (by == "tenant") {
    query.group_by = billing::GroupBy::kTenant;
  } else if (by == "project") {
    query.group_by = billing::GroupBy::kProject;
  } else if (by == "gpu_model") {
    query.group_by = billing::GroupBy::kGpuModel;
  } else if (by == "day") {
    query.group_by = billing::GroupBy::kDay;
  } else if (by.starts_with("label:") && by.size() > 6) {
    query.group_by = billing::GroupBy::kLabel;
    query.label_key = by.substr(6);
  } else {
    return fail(ErrorCode::kInvalidArgument,
                "group_by must be tenant, project, label:KEY, gpu_model or day");
  }
  return query;
}

// What a group's key stands for, when it names an object.
json group_name(const State& state, const billing::UsageQuery& query, const std::string& key) {
  if (query.group_by == billing::GroupBy::kTenant && state.tenant(key) != nullptr) {
    return state.tenant(key)->name;
  }
  if (query.group_by == billing::GroupBy::kProject && state.project(key) != nullptr) {
    return state.project(key)->name;
  }
  if (key == "services" && query.group_by != billing::GroupBy::kDay &&
      query.group_by != billing::GroupBy::kTenant) {
    return "calls to shared services";
  }
  return nullptr;
}

Result<HttpResponse> usage(Call& call) {
  for (const auto& [name, value] : call.target.query) {
    if (name != "tenant_id" && name != "from" && name != "to" && name != "group_by") {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", name));
    }
  }
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  const TimeMs now_ms = call.ctx.now_ms();
  ALLOT_TRY_LET(const TimeMs from,
                read_window_edge(call.target, "from", false, month_start(now_ms)));
  ALLOT_TRY_LET(const TimeMs to, read_window_edge(call.target, "to", true, now_ms));
  ALLOT_TRY_LET(const billing::UsageQuery query,
                read_grouping(call.target,
                              billing::UsageQuery{
                                  .tenant_id = tenant, .from_s = from / 1000, .to_s = to / 1000}));
  const State& state = call.ctx.state();
  ALLOT_TRY_LET(const auto groups, billing::usage_report(state, query, now_ms));
  ALLOT_TRY_LET(const auto forecast, billing::month_forecast(state, tenant, now_ms));
  json items = json::array();
  int64_t milli_seconds = 0;
  int64_t gb_seconds = 0;
  int64_t spend = 0;
  int64_t energy_mj = 0;
  int64_t carbon_ug = 0;
  for (const billing::UsageGroup& g : groups) {
    items.push_back({{"key", g.key},
                     {"name", group_name(state, query, g.key)},
                     {"gpu_milli_seconds", g.gpu_milli_seconds},
                     {"gpu_hours", billing::gpu_hours_text(g.gpu_milli_seconds)},
                     {"storage_gb_hours", billing::gb_hours_text(g.gb_seconds)},
                     {"spend", money(g.spend_micros)},
                     {"energy_kwh", billing::energy_kwh_text(g.energy_mj)},
                     {"carbon_kg", billing::carbon_kg_text(g.carbon_ug)}});
    if (__builtin_add_overflow(milli_seconds, g.gpu_milli_seconds, &milli_seconds) ||
        __builtin_add_overflow(gb_seconds, g.gb_seconds, &gb_seconds) ||
        __builtin_add_overflow(spend, g.spend_micros, &spend) ||
        __builtin_add_overflow(energy_mj, g.energy_mj, &energy_mj) ||
        __builtin_add_overflow(carbon_ug, g.carbon_ug, &carbon_ug)) {
      return fail(ErrorCode::kOverflow, "the report's total leaves the range of amounts");
    }
  }
  return json_reply(
      200, {{"from", format_time(query.from_s * 1000)},
            {"to", format_time(query.to_s * 1000)},
            {"group_by", call.target.query.contains("group_by") ? call.target.query.at("group_by")
                                                                : std::string("tenant")},
            {"items", items},
            {"total",
             {{"gpu_milli_seconds", milli_seconds},
              {"gpu_hours", billing::gpu_hours_text(milli_seconds)},
              {"storage_gb_hours", billing::gb_hours_text(gb_seconds)},
              {"spend", money(spend)},
              {"energy_kwh", billing::energy_kwh_text(energy_mj)},
              {"carbon_kg", billing::carbon_kg_text(carbon_ug)}}},
            {"forecast",
             {{"month", format_month(forecast.month_ms)},
              {"spent", money(forecast.spent_micros)},
              {"burn_per_hour", money(forecast.burn_micros_per_hour)},
              {"month_end", money(forecast.forecast_micros)}}}});
}

constexpr Route kRoutes[] = {
    {"GET", "/v1/usage", usage},
};

}  // namespace

// A window's edge: RFC 3339 time, or a month "YYYY-MM" (its start for `from`, its end for `to`,
// so that from=2026-11&to=2026-11 is November).
Result<TimeMs> read_window_edge(const Target& target, const char* name, bool end_of_month,
                                TimeMs fallback_ms) {
  auto it = target.query.find(name);
  if (it == target.query.end()) return fallback_ms;
  if (auto month = parse_month(it->second)) {
    return end_of_month ? next_month_start(*month) : *month;
  }
  if (auto at = parse_time(it->second)) return *at;
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("'{}' must be RFC 3339 time in UTC or a month YYYY-MM", name));
}

std::span<const Route> usage_routes() { return kRoutes; }

}  // namespace allot
