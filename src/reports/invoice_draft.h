// Drafting an invoice: what a tenant's instances used and cost within one calendar month (UTC),
// read from the core's state. The charges come from charge_between over the month, the same rule
// the ledger charges by, so the months of a usage add up exactly to its whole charge.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"
#include "core/kernel/command.h"
#include "core/kernel/state.h"

namespace allot::billing {

// The DraftInvoice command for `tenant_id`'s month starting at `month_ms` (its first moment),
// as seen at `now_ms`: one line per project x GPU model x region x price class with use in the
// month, in that order, over invoice_period. A prepaid tenant's invoice also says what its
// balance already paid: the ledger's usage postings within the period. `promotional_credits_micros`
// are the credits applied in the month (the ledger knows them; the caller passes them in). The
// command's id is left for the caller. Fails with kNotFound for an unknown tenant, kInvalidArgument
// for a month that is not a month's start, and kOverflow when a sum leaves int64.
[[nodiscard]] Result<DraftInvoice> draft_month(const State& state, const std::string& tenant_id,
                                               TimeMs month_ms, TimeMs now_ms,
                                               int64_t promotional_credits_micros);

// The stretch of time the tenant's invoice for the month starting at month_ms bills, as seen at
// now_ms: the month, started earlier where the month before was finalized early (its invoice
// ends where it read usage, and this one carries the rest), ended earlier where the month after
// already carries part of it, and ended at now_ms while the month runs. Whole seconds.
struct Period {
  TimeMs start_ms = 0;
  TimeMs end_ms = 0;
};
Period invoice_period(const State& state, const std::string& tenant_id, TimeMs month_ms,
                      TimeMs now_ms);

// The promotional credit the tenant's usage in the calendar month starting at month_ms took: what
// its usage postings in the month took from its credits (core/money/money.h).
int64_t credits_applied(const State& state, const std::string& tenant_id, TimeMs month_ms,
                        TimeMs now_ms);
// The promotional credit to apply to the tenant's invoice for that month: the same, over the
// invoice's period (invoice_period); the drafter caps it at the period's charges.
int64_t invoice_credits(const State& state, const std::string& tenant_id, TimeMs month_ms,
                        TimeMs now_ms);

// GPU milli x seconds of `milli` held over [start_s, end_s) clipped to [from_s, to_s); fails with
// kOverflow when it leaves int64.
[[nodiscard]] Result<int64_t> milli_seconds_within(int64_t milli, int64_t start_s, int64_t end_s,
                                                   int64_t from_s, int64_t to_s);

}  // namespace allot::billing
