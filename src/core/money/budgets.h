// Budgets in the core: the SetBudget and DeleteBudget commands, the admission check that keeps
// new work out of a spent budget, and the Tick's step that records alerts and stops running work.
#pragma once

#include <optional>
#include <string>

#include "common/error.h"
#include "core/kernel/command.h"
#include "core/kernel/handler.h"

namespace allot {

// - SetBudget: creates a budget for the tenant or one of its projects, or replaces the live one of
//   that scope (keeping its id, so its alerts stand). Refuses not_found (tenant, project),
//   invalid_argument (amount, thresholds, webhook); a new one also invalid_id and already_exists
//   (id taken).
// - DeleteBudget: marks the live budget deleted, stamped now (its row stays). Refuses not_found (no
//   live budget).
ALLOT_HANDLERS(SetBudget, DeleteBudget);

// Why the tenant's (and project's) new work may not start now because a budget that enforces is
// spent; nullopt when none is. Computes spend only for tenants that have such a budget.
std::optional<std::string> budget_blocks(const State& state, const std::string& tenant_id,
                                         const std::string& project_id, TimeMs now_ms);

// The same at creation, as a rejection with the stable code kBudgetExceeded.
[[nodiscard]] Status check_budget(const State& state, const std::string& tenant_id,
                                  const std::string& project_id, TimeMs now_ms);

// The Tick's step: for every live budget, each threshold the month's spend has reached, and not
// yet alerted against the budget's amount this month, becomes an alert and a "budget.threshold"
// event (the returned rows). A budget that enforces and is spent records its enforcement once a
// month (an alert of threshold kEnforcedPct) with a "budget.enforced" event, whatever its
// thresholds; a stop_running one asks its running work to stop (through the draft).
Rows budget_tick(Draft& draft, TimeMs now_ms);

// The threshold under which a budget's enforcement is recorded among its alerts: thresholds are 1
// or more, so it is never one of them.
inline constexpr int64_t kEnforcedPct = 0;

// Whether the budget has alerted for `pct` (or kEnforcedPct) in `month` against its amount as it
// stands: an alert recorded at a spend that does not reach the threshold of an amount changed
// since does not count, so that a changed amount re-arms its thresholds.
bool alerted(const State& state, const Budget& b, const std::string& month, int64_t pct);

// A webhook URL: http:// or https://, a host, no spaces or control characters, bounded.
[[nodiscard]] Status check_webhook_url(std::string_view url);

void put(State& state, const Budget& budget);
void put(State& state, const BudgetAlert& alert);

}  // namespace allot
