#include "sim/scenario_report.h"

#include <fmt/format.h>

#include "common/money.h"
#include "core/money/metering.h"
#include "core/money/money.h"
#include "reports/invoice_draft.h"
#include "reports/invoice_render.h"
#include "reports/pnl.h"
#include "reports/summary.h"

namespace allot::sim {
namespace {

using nlohmann::json;

std::string amount(int64_t micros) { return Money::from_micros(micros).to_string(); }

// A ratio in millionths as exact text with six decimals; Money's text is exactly that.
std::string millionths(int64_t value) { return Money::from_micros(value).to_string(); }

// kWh and kg CO2e to six decimals, as invoices show them.
std::string kwh(int64_t energy_mj) { return billing::energy_kwh_text(energy_mj); }
std::string kg(int64_t carbon_ug) { return billing::carbon_kg_text(carbon_ug); }

json pnl_node(const finance::Group& g) {
  const finance::NodeMonth& n = g.sums;
  json out = {{"node", g.key}, {"region", n.region}};
  for (const auto& [name, micros] : n.lines()) out[name] = amount(micros);
  out["energy_mj"] = n.energy_mj;
  out["energy_kwh"] = kwh(n.energy_mj);
  out["carbon_kg"] = kg(n.carbon_ug);
  out["utilisation"] = millionths(g.utilisation_ppm);
  return out;
}

// The operator's P&L of the month starting at month_ms, as it stands at end_ms.
json pnl_month(const State& state, TimeMs month_ms, TimeMs end_ms) {
  auto pnl = finance::month_pnl(state, month_ms, end_ms);
  if (!pnl) return {{"month", format_month(month_ms)}, {"error", pnl.error().message}};
  json nodes = json::array();
  for (const finance::Group& g :
       finance::group(state, *pnl, finance::GroupBy::kNode, finance::WhatIf{}, end_ms)) {
    nodes.push_back(pnl_node(g));
  }
  int64_t revenue = 0;
  int64_t costs = 0;
  for (const finance::NodeMonth& n : pnl->nodes) {
    revenue += n.revenue_micros;
    costs += n.costs_micros();
  }
  const int64_t net = revenue - pnl->credits_micros;
  return {{"month", format_month(month_ms)},
          {"nodes", nodes},
          {"totals",
           {{"revenue", amount(revenue)},
            {"credits", amount(pnl->credits_micros)},
            {"net_revenue", amount(net)},
            {"costs", amount(costs)},
            {"margin", amount(net - costs)}}}};
}

// An instance's energy and carbon over every month it ran in.
EnergyUse energy_of(const Instance& instance) {
  EnergyUse sum;
  for (const auto& [month, use] : instance.energy) {
    sum.energy_mj += use.energy_mj;
    sum.carbon_ug += use.carbon_ug;
  }
  return sum;
}

// The tenant's invoice for the month starting at month_ms, as the billing drafter makes it.
json invoice(const State& state, const std::string& tenant_id, TimeMs month_ms, TimeMs end_ms) {
  auto draft = billing::draft_month(state, tenant_id, month_ms, end_ms,
                                    billing::credits_applied(state, tenant_id, month_ms, end_ms));
  if (!draft) return {{"month", format_month(month_ms)}, {"error", draft.error().message}};
  json lines = json::array();
  int64_t subtotal = 0;
  for (const InvoiceLine& line : draft->lines) {
    const Project* project = state.project(line.project_id);
    lines.push_back({{"project", project != nullptr ? project->name : line.project_id},
                     {"gpu_model", line.key.model},
                     {"region", line.key.region},
                     {"class", price_class_name(line.key.price_class)},
                     {"gpu_hours", billing::gpu_hours_text(line.gpu_milli_seconds)},
                     {"amount", amount(line.amount_micros)}});
    subtotal += line.amount_micros;
  }
  return {{"month", format_month(month_ms)},
          {"lines", lines},
          {"subtotal", amount(subtotal)},
          {"credits_applied", amount(draft->credits_micros)},
          {"total", amount(subtotal - draft->credits_micros)}};
}

}  // namespace

json report(const State& state, const ScenarioIds& ids, TimeMs start_ms, TimeMs end_ms) {
  json tenants = json::array();
  for (const auto& [name, id] : ids.tenants) {
    const Tenant& tenant = *state.tenant(id);
    const Balance b = *balance_of(state, id, end_ms);
    json invoices = json::array();
    for (TimeMs month = month_start(start_ms); month <= end_ms; month = next_month_start(month)) {
      invoices.push_back(invoice(state, id, month, end_ms));
    }
    tenants.push_back({{"name", name},
                       {"billing", billing_mode_name(tenant.billing)},
                       {"balance", amount(b.cash_micros)},
                       {"credits", amount(b.credits_micros)},
                       {"unposted", amount(b.unposted_micros)},
                       {"invoices", invoices}});
  }
  json instances = json::array();
  for (const auto& [scenario_id, id] : ids.instances) {
    const Instance& i = *state.instance(id);
    auto usage = usage_of(state, i, end_ms);
    const EnergyUse energy = energy_of(i);
    instances.push_back({{"id", scenario_id},
                         {"state", instance_state_name(i.state)},
                         {"reason", i.reason},
                         {"billed_seconds", usage ? usage->end_s - usage->start_s : 0},
                         {"charge", amount(usage ? charge_of(state, *usage).value_or(0) : 0)},
                         {"posted", amount(i.billed_micros)},
                         {"energy_mj", energy.energy_mj},
                         {"energy_kwh", kwh(energy.energy_mj)},
                         {"carbon_kg", kg(energy.carbon_ug)}});
  }
  for (const auto& [scenario_id, error] : ids.refused) {
    instances.push_back({{"id", scenario_id},
                         {"state", "refused"},
                         {"reason", fmt::format("{}: {}", code_name(error.code), error.message)},
                         {"billed_seconds", 0},
                         {"charge", amount(0)},
                         {"posted", amount(0)},
                         {"energy_mj", 0},
                         {"energy_kwh", kwh(0)},
                         {"carbon_kg", kg(0)}});
  }
  // Months with at least a moment of the run; one that starts at the end has nothing to show.
  json pnl = json::array();
  for (TimeMs month = month_start(start_ms); month < end_ms; month = next_month_start(month)) {
    pnl.push_back(pnl_month(state, month, end_ms));
  }
  const auto sums = state.ledger.sums();
  return {{"start", format_time(start_ms)},
          {"end", format_time(end_ms)},
          {"tenants", tenants},
          {"instances", instances},
          {"pnl", pnl},
          {"ledger",
           {{"sum", amount(static_cast<int64_t>(sums.posted))},
            {"pending", amount(static_cast<int64_t>(sums.pending))},
            {"transfers", state.ledger.transfers().size()}}}};
}

}  // namespace allot::sim
