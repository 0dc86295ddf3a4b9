// What the operator reads off the books for a month: the P&L grouped by node, pool, model, region
// or the whole cloud (JSON or CSV), when each asset pays back, and owning against renting.
// Operator admins only.
#include <fmt/format.h>

#include <utility>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/books.h"
#include "common/clock.h"
#include "reports/summary.h"

namespace allot {
namespace {

using nlohmann::json;

// GPU-milliseconds as GPU-hours with three decimals.
std::string gpu_hours(int64_t gpu_ms) { return format_scaled(divide_rounded(gpu_ms, 3'600), 3); }

// The ?month= of a report (default: the current month).
Result<TimeMs> query_month(const Call& call) {
  auto it = call.target.query.find("month");
  if (it == call.target.query.end()) return month_start(call.ctx.now_ms());
  return read_month("month", it->second);
}

// The ?format= of a report: true for CSV.
Result<bool> wants_csv(const Call& call) {
  auto it = call.target.query.find("format");
  if (it == call.target.query.end() || it->second == "json") return false;
  if (it->second == "csv") return true;
  return fail(ErrorCode::kInvalidArgument, "format must be json or csv");
}

// A group's figures as (column, value) pairs, in the order of the CSV's columns; the JSON object
// and the CSV row are both made from them, so they cannot drift apart.
std::vector<std::pair<std::string, json>> group_columns(const finance::Group& g) {
  const finance::NodeMonth& s = g.sums;
  std::vector<std::pair<std::string, json>> columns{
      {"key", g.key}, {"nodes", g.nodes}, {"gpus", s.gpus}};
  for (const auto& [name, micros] : s.lines()) columns.emplace_back(name, money_text(micros));
  columns.insert(
      columns.end(),
      {
          {"principal_repaid", money_text(s.principal_micros)},
          // 1 Wh is 3,600,000 mJ, and a gram is 1,000,000 µg: three decimals of kWh and kg.
          {"energy_kwh", format_scaled(divide_rounded(s.energy_mj, 3'600'000), 3)},
          {"carbon_kg", format_scaled(divide_rounded(s.carbon_ug, 1'000'000), 3)},
          {"available_gpu_hours", gpu_hours(s.available_gpu_ms)},
          {"allocated_gpu_hours", gpu_hours(s.allocated_gpu_ms)},
          {"idle_gpu_hours", gpu_hours(g.idle_gpu_ms)},
          {"utilisation", format_scaled(g.utilisation_ppm, 6)},
          {"idle_cost", money_text(g.idle_cost_micros)},
          {"price_per_gpu_hour", money_text(g.price_micros_per_gpu_hour)},
          {"break_even_utilisation",
           g.break_even_ppm ? json(format_scaled(*g.break_even_ppm, 6)) : json(nullptr)},
      });
  return columns;
}

json group_json(const finance::Group& g) {
  json out = json::object();
  for (auto& [name, value] : group_columns(g)) out[name] = std::move(value);
  if (g.what_if_revenue_micros && g.what_if_margin_micros) {
    out["what_if"] = {{"revenue", money_text(*g.what_if_revenue_micros)},
                      {"margin", money_text(*g.what_if_margin_micros)}};
  }
  return out;
}

// A JSON value as a CSV cell: text as it is, numbers written, null empty.
std::string cell(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.is_null() ? std::string() : value.dump();
}

std::string report_csv(const std::vector<finance::Group>& groups) {
  std::vector<std::string> header;
  for (const auto& [name, value] : group_columns(finance::Group{})) header.push_back(name);
  header.emplace_back("what_if_revenue");
  header.emplace_back("what_if_margin");
  std::string out = csv_line(header);
  for (const finance::Group& g : groups) {
    std::vector<std::string> row;
    for (const auto& [name, value] : group_columns(g)) row.push_back(cell(value));
    row.push_back(g.what_if_revenue_micros ? money_text(*g.what_if_revenue_micros) : "");
    row.push_back(g.what_if_margin_micros ? money_text(*g.what_if_margin_micros) : "");
    out += csv_line(row);
  }
  return out;
}

// The cloud's totals: revenue less the promotional credits is what the month's invoices total,
// and the margin is what is left of that after the costs. While the month runs, they are the month
// to date, and the projection is the whole month's.
// Storage is the region's revenue, outside the node rows: the totals count it.
Result<json> totals_json(const finance::MonthPnl& pnl) {
  ALLOT_TRY_LET(const int64_t revenue, pnl.revenue_micros());
  int64_t costs = 0;
  int64_t storage = 0;
  for (const finance::NodeMonth& node : pnl.nodes) {
    if (__builtin_add_overflow(costs, node.costs_micros(), &costs)) {
      return fail(ErrorCode::kOverflow, "the report's totals leave the range of amounts");
    }
  }
  for (const auto& [region, amount] : pnl.storage_by_region) storage += amount;
  int64_t net = 0;
  int64_t margin = 0;
  if (__builtin_sub_overflow(revenue, pnl.credits_micros, &net) ||
      __builtin_sub_overflow(net, costs, &margin)) {
    return fail(ErrorCode::kOverflow, "the report's totals leave the range of amounts");
  }
  json out{{"revenue", money_text(revenue)},
           {"storage_revenue", money_text(storage)},
           {"credits", money_text(pnl.credits_micros)},
           {"net_revenue", money_text(net)},
           {"costs", money_text(costs)},
           {"margin", money_text(margin)}};
  if (pnl.projection) {
    out["whole_month_projected"] = {{"net_revenue", money_text(pnl.projection->net_revenue_micros)},
                                    {"costs", money_text(pnl.projection->costs_micros)},
                                    {"margin", money_text(pnl.projection->margin_micros)}};
  }
  return out;
}

// What a person reads first in a report of a month still running.
std::string month_to_date_note(TimeMs through_ms) {
  return fmt::format(
      "month to date, through {}: costs that accrue with time (depreciation, financing, "
      "colocation, fixed costs) are the part of the month that has passed; "
      "totals.whole_month_projected is the whole month at the rate so far",
      format_time(through_ms));
}

// ?price_factor= and ?utilisation=, exact decimals in parts per million.
Result<finance::WhatIf> read_what_if(const Call& call) {
  finance::WhatIf what_if;
  const auto& query = call.target.query;
  if (auto it = query.find("price_factor"); it != query.end()) {
    ALLOT_TRY_ASSIGN(what_if.price_factor_ppm, parse_scaled("price_factor", it->second, 6));
  }
  if (auto it = query.find("utilisation"); it != query.end()) {
    int64_t ppm = 0;
    ALLOT_TRY_ASSIGN(ppm, parse_scaled("utilisation", it->second, 6));
    if (ppm > 1'000'000) {
      return fail(ErrorCode::kInvalidArgument, "'utilisation' is a fraction from 0 to 1");
    }
    what_if.utilisation_ppm = ppm;
  }
  return what_if;
}

// GET /v1/finance/report?month&by&price_factor&utilisation&format.
Result<HttpResponse> report(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(allow_query(call.target, {"month", "by", "price_factor", "utilisation", "format"}));
  ALLOT_TRY_LET(const TimeMs month_ms, query_month(call));
  const auto by_it = call.target.query.find("by");
  const std::string by_name = by_it == call.target.query.end() ? "node" : by_it->second;
  const auto by = finance::parse_group_by(by_name);
  if (!by)
    return fail(ErrorCode::kInvalidArgument, "by must be node, pool, model, region or total");
  ALLOT_TRY_LET(const finance::WhatIf what_if, read_what_if(call));
  ALLOT_TRY_LET(const bool csv, wants_csv(call));
  const State& state = call.ctx.state();
  ALLOT_TRY_LET(const auto pnl, finance::month_pnl(state, month_ms, call.ctx.now_ms()));
  const std::vector<finance::Group> groups =
      finance::group(state, pnl, *by, what_if, call.ctx.now_ms());
  if (csv) return csv_reply(report_csv(groups));
  json items = json::array();
  for (const finance::Group& g : groups) items.push_back(group_json(g));
  ALLOT_TRY_LET(const json totals, totals_json(pnl));
  json storage = json::array();
  for (const auto& [region, amount] : pnl.storage_by_region) {
    storage.push_back({{"region", region}, {"revenue", money_text(amount)}});
  }
  json out{{"month", format_month(month_ms)},
           {"through", format_time(pnl.through_ms)},
           {"month_to_date", pnl.month_to_date()},
           {"by", by_name},
           {"groups", items},
           {"storage", storage},
           {"totals", totals}};
  if (pnl.month_to_date()) out["note"] = month_to_date_note(pnl.through_ms);
  return json_reply(200, out);
}

// GET /v1/finance/payback?month: per asset, what its cash margin has recovered of its cost.
Result<HttpResponse> payback(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(allow_query(call.target, {"month"}));
  ALLOT_TRY_LET(const TimeMs month_ms, query_month(call));
  ALLOT_TRY_LET(const auto rows, finance::payback(call.ctx.state(), month_ms, call.ctx.now_ms()));
  json items = json::array();
  for (const finance::Payback& p : rows) {
    items.push_back({{"asset_id", p.asset_id},
                     {"name", p.name},
                     {"cost", money_text(p.cost_micros)},
                     {"recovered", money_text(p.recovered_micros)},
                     {"last_month_margin", money_text(p.last_month_margin_micros)},
                     {"payback_month",
                      p.payback_month_ms ? json(format_month(*p.payback_month_ms)) : json(nullptr)},
                     {"projected", p.projected}});
  }
  return json_reply(200, {{"month", format_month(month_ms)}, {"items", items}});
}

json quote_json(const finance::RentQuote& q) {
  return {{"provider", q.provider},
          {"price_per_gpu_hour", money_text(q.micros_per_gpu_hour)},
          {"used", money_text(q.used_micros)},
          {"capacity", money_text(q.capacity_micros)}};
}

// Owning against renting as CSV: one row per model and provider (a model without quotes: one
// row with the provider's cells empty).
std::string buy_or_rent_csv(const std::vector<finance::BuyOrRent>& models) {
  std::string out =
      csv_line({"gpu_model", "owned_costs", "allocated_gpu_hours", "available_gpu_hours",
                "owned_per_used_gpu_hour", "provider", "price_per_gpu_hour", "used", "capacity"});
  for (const finance::BuyOrRent& m : models) {
    const std::vector<std::string> owned = {
        m.gpu_model, money_text(m.owned_costs_micros), gpu_hours(m.allocated_gpu_ms),
        gpu_hours(m.available_gpu_ms), money_text(m.owned_micros_per_used_gpu_hour)};
    if (m.quotes.empty()) {
      std::vector<std::string> row = owned;
      row.resize(row.size() + 4);
      out += csv_line(row);
    }
    for (const finance::RentQuote& q : m.quotes) {
      std::vector<std::string> row = owned;
      row.insert(row.end(), {q.provider, money_text(q.micros_per_gpu_hour),
                             money_text(q.used_micros), money_text(q.capacity_micros)});
      out += csv_line(row);
    }
  }
  return out;
}

// GET /v1/finance/buy-or-rent?month&format.
Result<HttpResponse> buy_or_rent(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(allow_query(call.target, {"month", "format"}));
  ALLOT_TRY_LET(const TimeMs month_ms, query_month(call));
  ALLOT_TRY_LET(const bool csv, wants_csv(call));
  const State& state = call.ctx.state();
  ALLOT_TRY_LET(const auto pnl, finance::month_pnl(state, month_ms, call.ctx.now_ms()));
  const std::vector<finance::BuyOrRent> models = finance::buy_or_rent(state, pnl);
  if (csv) return csv_reply(buy_or_rent_csv(models));
  json items = json::array();
  for (const finance::BuyOrRent& m : models) {
    json quotes = json::array();
    for (const finance::RentQuote& q : m.quotes) quotes.push_back(quote_json(q));
    items.push_back({{"gpu_model", m.gpu_model},
                     {"owned_costs", money_text(m.owned_costs_micros)},
                     {"allocated_gpu_hours", gpu_hours(m.allocated_gpu_ms)},
                     {"available_gpu_hours", gpu_hours(m.available_gpu_ms)},
                     {"owned_per_used_gpu_hour", money_text(m.owned_micros_per_used_gpu_hour)},
                     {"quotes", quotes}});
  }
  return json_reply(200, {{"month", format_month(month_ms)}, {"items", items}});
}

constexpr Route kRoutes[] = {
    {"GET", "/v1/finance/report", report},
    {"GET", "/v1/finance/payback", payback},
    {"GET", "/v1/finance/buy-or-rent", buy_or_rent},
};

}  // namespace

std::span<const Route> finance_report_routes() { return kRoutes; }

}  // namespace allot
