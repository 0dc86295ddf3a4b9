// Tenants' money in the ledger: top-ups and promotional credits, holds for a runway before work
// starts, usage posted as it accrues, work stopped at the second a prepaid balance (or a postpaid
// credit limit) runs out, and spot work preempted when the spot price passes its maximum.
//
// Accounts (ids are paths):
//   tenant/<id>/prepaid, tenant/<id>/postpaid  what the tenant holds (credit-normal). The prepaid
//                                              one may never go below zero: the ledger refuses.
//   tenant/<id>/credit/<grant>                 one promotional credit; user_data is its expiry.
//   operator/funding                           money paid in (debited by top-ups).
//   operator/promotions                        credits given (debited by grants, back on expiry).
//   operator/revenue                           usage earned (credited by usage, held by holds).
#pragma once

#include <optional>
#include <string>

#include "core/kernel/handler.h"
#include "core/model/accounts.h"

namespace allot {

struct Balance {
  int64_t cash_micros = 0;      // Posted on the tenant's own account (negative: owed).
  int64_t credits_micros = 0;   // Promotional credit left, not yet expired.
  int64_t held_micros = 0;      // Held for running work's runway.
  int64_t unposted_micros = 0;  // Usage accrued and not yet posted.
  // What new work may still spend: cash + credits (+ the credit limit) less, per instance, its
  // unposted usage or its hold, whichever is more (a hold covers the usage accrued since it was
  // taken); for a postpaid tenant without a credit limit, unbounded (and reported as 0).
  int64_t available_micros = 0;
};

// The tenant's balance at `now_ms`.
[[nodiscard]] Result<Balance> balance_of(const State& state, const std::string& tenant_id,
                                         TimeMs now_ms);

// Promotional credit the tenant's usage postings made in [from_ms, to_ms) spent: what its invoice
// for that month shows as credits applied.
int64_t credits_spent(const State& state, const std::string& tenant_id, TimeMs from_ms,
                      TimeMs to_ms);

// - Topup: posts topup/<id>: the amount from operator/funding to the tenant's account or, for a
//   credit, from operator/promotions to its own credit account expiring then; a repeat adds
//   nothing. Refuses not_found (tenant), invalid_argument (id, amount, expiry, the operator),
//   conflict (id reused).
// - SetBilling: sets the tenant's billing mode and credit limit (no rows if unchanged); a mode
//   change voids its work's holds and moves a positive balance to the new mode's account. Refuses
//   not_found (tenant), conflict (a mode change while it owes), invalid_argument (the operator, a
//   bad or prepaid limit).
ALLOT_HANDLERS(Topup, SetBilling);

// Why a tenant's new work may not start now (its money is used up), or nullopt.
std::optional<std::string> funds_block(const Draft& draft, const std::string& tenant_id,
                                       TimeMs now_ms);
// When the tenant's running work, running on as it is, would pass what its money covers (the
// first second not covered), if that is before `until_ms`; nullopt for unbounded tenants. A
// simulation ticks then, so that the work stops when a live timer would stop it.
std::optional<TimeMs> money_runs_out_at(const State& state, const std::string& tenant_id,
                                        TimeMs now_ms, TimeMs until_ms);
// At placement: holds the runway's worth of the instance's charge on its tenant's balance (as
// much as is left, for a tenant whose spending is bounded).
void hold_runway(Draft& draft, Instance& instance, const Node& node, TimeMs now_ms,
                 const CoreOptions& options);
// The timer's money work: spot work over its maximum price preempted, usage posted for tenants
// with work due (every rating interval, at the start of a month, and when work ends), bounded
// tenants' work stopped where their money runs out, expired promotional credits taken back.
// `post_all` posts every tenant's usage now, due or not.
void settle_money(Draft& draft, TimeMs now_ms, const CoreOptions& options, bool post_all = false);

// - SetPrice: a price in the catalog (prices.cc): adds it for its model x region x class from
//   effective_ms (now if 0). Refuses invalid_argument (a model not in the catalog, a bad region, a
//   negative rate, a time past) and already_exists (the key has a price at that time).
ALLOT_HANDLERS(SetPrice);
void put(State& state, const meter::Price& price);
void put(State& state, const ledger::Account& account);
void put(State& state, const LedgerEntry& entry);

}  // namespace allot
