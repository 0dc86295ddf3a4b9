#include "sim/scenario_report.h"

#include <fmt/format.h>

#include "common/money.h"
#include "core/metering.h"
#include "core/money.h"

namespace allot::sim {
namespace {

using nlohmann::json;

std::string amount(int64_t micros) { return Money::from_micros(micros).to_string(); }

// GPU milli-seconds as GPU-hours with six decimals, exactly.
std::string gpu_hours(int64_t milli_seconds) {
  const int64_t micro_hours = milli_seconds * 1'000 / 3'600'000;
  return fmt::format("{}.{:06}", micro_hours / 1'000'000, micro_hours % 1'000'000);
}

struct Line {
  int64_t milli_seconds = 0;
  int64_t micros = 0;
};

// Promotional credit spent by postings made in [from_ms, to_ms).
int64_t credits_spent(const State& state, const std::string& tenant_id, TimeMs from_ms,
                      TimeMs to_ms) {
  const std::string prefix = credit_account(tenant_id, "");
  int64_t total = 0;
  for (const ledger::Transfer& t : state.ledger.transfers()) {
    if (t.code == "usage" && t.debit_account_id.starts_with(prefix) && t.created_at_ms >= from_ms &&
        t.created_at_ms < to_ms) {
      total += t.amount;
    }
  }
  return total;
}

json invoice(const State& state, const std::string& tenant_id, TimeMs from_ms, TimeMs to_ms,
             TimeMs end_ms) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, Line> lines;
  for (const auto& [id, instance] : state.instances) {
    if (instance.tenant_id != tenant_id) continue;
    auto usage = usage_of(state, instance, end_ms);
    if (!usage) continue;
    const int64_t from_s = from_ms / 1000, to_s = to_ms / 1000;
    const int64_t seconds =
        std::max<int64_t>(0, std::min(usage->end_s, to_s) - std::max(usage->start_s, from_s));
    const int64_t charge = charge_between(state, *usage, from_s, to_s).value_or(0);
    if (seconds == 0 && charge == 0) continue;
    const Project* project = state.project(instance.project_id);
    Line& line = lines[{project != nullptr ? project->name : instance.project_id, usage->key.model,
                        usage->key.region, std::string(price_class_name(usage->key.price_class))}];
    line.milli_seconds += usage->milli * seconds;
    line.micros += charge;
  }
  json out = json::array();
  int64_t subtotal = 0;
  for (const auto& [key, line] : lines) {
    out.push_back({{"project", std::get<0>(key)},
                   {"gpu_model", std::get<1>(key)},
                   {"region", std::get<2>(key)},
                   {"class", std::get<3>(key)},
                   {"gpu_hours", gpu_hours(line.milli_seconds)},
                   {"amount", amount(line.micros)}});
    subtotal += line.micros;
  }
  const int64_t credits = std::min(subtotal, credits_spent(state, tenant_id, from_ms, to_ms));
  return {{"month", format_month(from_ms)},
          {"lines", out},
          {"subtotal", amount(subtotal)},
          {"credits_applied", amount(credits)},
          {"total", amount(subtotal - credits)}};
}

}  // namespace

json report(const State& state, const ScenarioIds& ids, TimeMs start_ms, TimeMs end_ms) {
  json tenants = json::array();
  for (const auto& [name, id] : ids.tenants) {
    const Tenant& tenant = *state.tenant(id);
    const Balance b = *balance_of(state, id, end_ms);
    json invoices = json::array();
    for (TimeMs month = month_start(start_ms); month <= end_ms; month = next_month_start(month)) {
      invoices.push_back(invoice(state, id, month, next_month_start(month), end_ms));
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
