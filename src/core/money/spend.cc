#include "core/money/spend.h"

#include <limits>

#include "core/money/metering.h"
#include "core/money/storage.h"

namespace allot {
namespace {

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<int64_t>::max();
  return sum;
}

void add_spend(TenantSpend& spend, const std::string& project_id, int64_t micros) {
  if (micros == 0) return;
  spend.total_micros = saturating_add(spend.total_micros, micros);
  int64_t& project = spend.by_project_micros[project_id];
  project = saturating_add(project, micros);
}

}  // namespace

std::map<std::string, TenantSpend> month_spends(const State& state,
                                                const std::set<std::string>& tenant_ids,
                                                TimeMs now_ms) {
  const TimeMs from_ms = month_start(now_ms);
  std::map<std::string, TenantSpend> spends;
  for (const std::string& id : tenant_ids) spends[id];  // Tenants that spent nothing show zero.
  for (const auto& [id, instance] : state.instances) {
    if (instance.started_at_ms == 0 || !tenant_ids.contains(instance.tenant_id)) continue;
    // Work that ended before this month began costs nothing in it.
    if (is_final(instance.state) && instance.ended_at_ms < from_ms) continue;
    auto usage = usage_of(state, instance, now_ms);
    if (!usage) continue;
    auto charge = charge_between(state, *usage, from_ms / 1000, now_ms / 1000);
    // A charge that does not fit in int64 is past any budget.
    const int64_t micros = charge ? *charge : std::numeric_limits<int64_t>::max();
    add_spend(spends[instance.tenant_id], instance.project_id, micros);
  }
  // Storage, as invoices charge it.
  for (const auto& [id, volume] : state.volumes) {
    if (!tenant_ids.contains(volume.tenant_id)) continue;
    if (volume.deleted_at_ms != 0 && volume.deleted_at_ms < from_ms) continue;
    auto charge =
        storage_between(state, storage_use(volume, now_ms), from_ms / 1000, now_ms / 1000);
    const int64_t micros = charge ? *charge : std::numeric_limits<int64_t>::max();
    add_spend(spends[volume.tenant_id], volume.project_id, micros);
  }
  // Calls to other tenants' shared services, as invoices charge them: the tenant's whole, in no
  // project of it.
  for (const std::string& id : tenant_ids) {
    auto rows = state.usage_by_caller.find(id);
    if (rows == state.usage_by_caller.end()) continue;
    for (const std::string& row_id : rows->second) {
      const ServiceUsage& u = state.service_usage.at(row_id);
      if (u.hour_ms >= from_ms) {
        spends[id].total_micros = saturating_add(spends[id].total_micros, u.charged_micros);
      }
    }
  }
  return spends;
}

TenantSpend month_spend(const State& state, const std::string& tenant_id, TimeMs now_ms) {
  return month_spends(state, {tenant_id}, now_ms).at(tenant_id);
}

}  // namespace allot
