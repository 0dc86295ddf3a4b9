// The invoice commands' logic, used by Core::apply. Each reads the state and returns the changed
// objects, or a rejection that changes nothing.
#pragma once

#include "common/error.h"
#include "core/kernel/handler.h"

namespace allot {

[[nodiscard]] Result<Rows> apply(const State& state, const DraftInvoice& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const FinalizeInvoice& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const MarkInvoicePaid& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const VoidInvoice& c, TimeMs now_ms,
                                 const Placing& placing);
// Whether the details may replace the tenant's (SetBillingDetails, checked before it is applied).
[[nodiscard]] Status check_billing_details(const State& state, const SetBillingDetails& c);
[[nodiscard]] Result<Rows> apply(const State& state, const SetBillingDetails& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const CreateCreditNote& c, TimeMs now_ms,
                                 const Placing& placing);

// The tenant's invoice for the month starting at month_ms that is not void, or null.
const Invoice* live_invoice(const State& state, const std::string& tenant_id, TimeMs month_ms);

void put(State& state, const Invoice& invoice);
void put(State& state, const CreditNote& note);

}  // namespace allot
