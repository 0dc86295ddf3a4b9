// Budgets in the core: the SetBudget and DeleteBudget commands, the admission check that keeps
// new work out of a spent budget, and the Tick's step that records alerts and stops running work.
#pragma once

#include <optional>
#include <string>

#include "common/error.h"
#include "core/cluster_ops.h"
#include "core/command.h"

namespace allot {

[[nodiscard]] Result<Rows> set_budget(const State& state, const SetBudget& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> delete_budget(const State& state, const DeleteBudget& c, TimeMs now_ms);

// Why the tenant's (and project's) new work may not start now because a budget that enforces is
// spent; nullopt when none is. Computes spend only for tenants that have such a budget.
std::optional<std::string> budget_blocks(const State& state, const std::string& tenant_id,
                                         const std::string& project_id, TimeMs now_ms);

// The same at creation, as a rejection with the stable code kBudgetExceeded.
[[nodiscard]] Status check_budget(const State& state, const std::string& tenant_id,
                                  const std::string& project_id, TimeMs now_ms);

// The Tick's step: for every live budget, each threshold the month's spend has reached for the
// first time this month becomes an alert and an event (the returned rows); a stop_running budget
// that is spent asks its running work to stop (through the draft).
Rows budget_tick(Draft& draft, TimeMs now_ms);

// A webhook URL: http:// or https://, a host, no spaces or control characters, bounded.
[[nodiscard]] Status check_webhook_url(std::string_view url);

}  // namespace allot
