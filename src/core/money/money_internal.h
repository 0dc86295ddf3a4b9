// What money.cc and settle.cc share: the ledger as one tenant sees it within a command.
#pragma once

#include <string>
#include <vector>

#include "core/kernel/draft.h"

namespace allot::money {

// Adds the account to the draft unless the ledger or the draft has it already.
void ensure_account(Draft& draft, const ledger::Account& account);
// The operator's accounts and the tenant's own account for its billing mode.
void ensure_accounts(Draft& draft, const Tenant& tenant);
// Posted credits less posted debits of an account (0 when there is none).
int64_t posted(const ledger::Ledger& ledger, const std::string& id);
// The tenant's promotional credits with something left that have not lapsed at `now_ms`, in the
// order they are spent: the soonest to lapse first.
std::vector<const ledger::Account*> live_credits(const ledger::Ledger& ledger,
                                                 const std::string& tenant_id, TimeMs now_ms);
// What the tenant may spend in all, by the ledger as it stands: its own account, its live
// credits and, postpaid, its credit limit.
int64_t funds(const State& state, const Tenant& tenant, TimeMs now_ms);
// What the draft's posted transfers add to (or take from) the tenant's accounts.
int64_t draft_flow(const Draft& draft, const std::string& tenant_id);
// The charge of an instance's usage up to `at_ms` (its whole charge once it ended before).
int64_t charge_to(const State& state, const Instance& instance, TimeMs at_ms);
// The tenant's instances that hold money or have charges not all posted, in id order.
std::vector<std::string> money_instances(const Draft& draft, const std::string& tenant_id);
// Accrued and not yet posted, and held, over those instances.
int64_t unposted(const Draft& draft, const std::vector<std::string>& ids, TimeMs at_ms);
int64_t held(const Draft& draft, const std::vector<std::string>& ids);
// Voids the instance's hold, if it has one.
void release_hold(Draft& draft, Instance& instance);
// What the instances have taken of the tenant's money and not yet posted: each its usage accrued
// since its last posting or its hold, whichever is more (the hold covers that usage).
int64_t committed(const Draft& draft, const std::vector<std::string>& ids, TimeMs at_ms);
// funds + draft_flow - committed: what new work may still spend.
int64_t available(const Draft& draft, const Tenant& tenant, TimeMs now_ms);

}  // namespace allot::money
