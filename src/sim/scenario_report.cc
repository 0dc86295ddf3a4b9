#include "sim/scenario_report.h"

#include <fmt/format.h>

#include "billing/invoice_draft.h"
#include "billing/invoice_render.h"
#include "common/money.h"
#include "core/metering.h"
#include "core/money.h"

namespace allot::sim {
namespace {

using nlohmann::json;

std::string amount(int64_t micros) { return Money::from_micros(micros).to_string(); }

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
    instances.push_back({{"id", scenario_id},
                         {"state", instance_state_name(i.state)},
                         {"reason", i.reason},
                         {"billed_seconds", usage ? usage->end_s - usage->start_s : 0},
                         {"charge", amount(usage ? charge_of(state, *usage).value_or(0) : 0)},
                         {"posted", amount(i.billed_micros)}});
  }
  for (const auto& [scenario_id, error] : ids.refused) {
    instances.push_back({{"id", scenario_id},
                         {"state", "refused"},
                         {"reason", fmt::format("{}: {}", code_name(error.code), error.message)},
                         {"billed_seconds", 0},
                         {"charge", amount(0)},
                         {"posted", amount(0)}});
  }
  const auto sums = state.ledger.sums();
  return {{"start", format_time(start_ms)},
          {"end", format_time(end_ms)},
          {"tenants", tenants},
          {"instances", instances},
          {"ledger",
           {{"sum", amount(static_cast<int64_t>(sums.posted))},
            {"pending", amount(static_cast<int64_t>(sums.pending))},
            {"transfers", state.ledger.transfers().size()}}}};
}

}  // namespace allot::sim
