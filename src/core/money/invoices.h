// The invoice commands' logic, used by Core::apply. Each reads the state and returns the changed
// objects, or a rejection that changes nothing.
#pragma once

#include "common/error.h"
#include "core/kernel/handler.h"

namespace allot {

// Whether the details may replace the tenant's (SetBillingDetails, checked before it is applied).
[[nodiscard]] Status check_billing_details(const State& state, const SetBillingDetails& c);

// - DraftInvoice: creates the tenant's invoice for a begun month, or rewrites its live draft
//   (total: lines less credits). Refuses not_found (tenant), invalid_argument (month, period,
//   amounts), overflow, conflict (not a draft); a new one also invalid_id, already_exists (id
//   taken), limit_exceeded.
// - FinalizeInvoice: makes a draft final: numbered INV-nnnnnn, stamped, marked early if its month
//   has not ended. Refuses not_found, conflict (not a draft, or drafted before its month ended and
//   not re-drafted since) and period_open (the month has not ended and early is not set).
// - MarkInvoicePaid: records the payment of a final invoice: what is due is posted from the
//   operator's funding account to the tenant's account of the invoice's billing mode (transfer
//   "invoice/ID/paid"), kept as payment_micros, and the invoice is stamped paid. Refuses
//   not_found and conflict (not final).
// - VoidInvoice: voids a draft or final invoice, stamping voided_at_ms. Refuses not_found and
//   conflict (paid or void already, or it has credit notes).
// - SetBillingDetails: replaces the tenant's billing details (a tenant row). Refuses as
//   check_billing_details does: not_found (tenant), invalid_argument (a field too long or with
//   control characters, a bad email).
// - CreateCreditNote: issues a credit note CN-nnnnnn against a final or paid invoice, adding to its
//   credited_micros and posting the amount from the operator's revenue back to the tenant's
//   account of the invoice's billing mode (transfer "credit-note/ID"). Refuses not_found (invoice),
//   invalid_id, already_exists (id taken), conflict (a draft or void invoice), invalid_argument
//   (the reason, an amount not in 1..what is uncredited).
ALLOT_HANDLERS(DraftInvoice, FinalizeInvoice, MarkInvoicePaid, VoidInvoice, SetBillingDetails,
               CreateCreditNote);

// The tenant's invoice for the month starting at month_ms that is not void, or null.
const Invoice* live_invoice(const State& state, const std::string& tenant_id, TimeMs month_ms);

void put(State& state, const Invoice& invoice);
void put(State& state, const CreditNote& note);

}  // namespace allot
