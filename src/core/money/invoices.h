// The invoice commands' logic, used by Core::apply. Each reads the state and returns the changed
// objects, or a rejection that changes nothing.
#pragma once

#include "common/error.h"
#include "core/kernel/handler.h"

namespace allot {

[[nodiscard]] Handler<DraftInvoice> apply;
[[nodiscard]] Handler<FinalizeInvoice> apply;
[[nodiscard]] Handler<MarkInvoicePaid> apply;
[[nodiscard]] Handler<VoidInvoice> apply;
// Whether the details may replace the tenant's (SetBillingDetails, checked before it is applied).
[[nodiscard]] Status check_billing_details(const State& state, const SetBillingDetails& c);
[[nodiscard]] Handler<SetBillingDetails> apply;
[[nodiscard]] Handler<CreateCreditNote> apply;

// The tenant's invoice for the month starting at month_ms that is not void, or null.
const Invoice* live_invoice(const State& state, const std::string& tenant_id, TimeMs month_ms);

void put(State& state, const Invoice& invoice);
void put(State& state, const CreditNote& note);

}  // namespace allot
