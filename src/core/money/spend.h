// Month-to-date spend: what a tenant's (or project's) instances and volumes cost from the start of
// the calendar month up to now, at the prices in force. A pure function of the state and the time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "core/kernel/state.h"

namespace allot {

struct TenantSpend {
  int64_t total_micros = 0;
  std::map<std::string, int64_t> by_project_micros;  // Projects that spent anything.

  int64_t of(const std::string& project_id) const {
    if (project_id.empty()) return total_micros;
    auto it = by_project_micros.find(project_id);
    return it == by_project_micros.end() ? 0 : it->second;
  }
};

// One pass over the state's instances and one over its volumes. Sums saturate at INT64_MAX instead
// of failing: a spend that large is past every budget, which is all that callers ask of it.
TenantSpend month_spend(const State& state, const std::string& tenant_id, TimeMs now_ms);

// The same for several tenants in one pass (the Tick's, over every tenant with a budget).
std::map<std::string, TenantSpend> month_spends(const State& state,
                                                const std::set<std::string>& tenant_ids,
                                                TimeMs now_ms);

}  // namespace allot
