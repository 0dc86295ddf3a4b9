// The invoice commands' logic, used by Core::apply. Each reads the state and returns the changed
// objects, or a rejection that changes nothing.
#pragma once

#include "common/error.h"
#include "core/cluster_ops.h"

namespace allot {

[[nodiscard]] Result<Rows> draft_invoice(const State& state, const DraftInvoice& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> finalize_invoice(const State& state, const FinalizeInvoice& c,
                                            TimeMs now_ms);
[[nodiscard]] Result<Rows> mark_invoice_paid(const State& state, const MarkInvoicePaid& c,
                                             TimeMs now_ms);
[[nodiscard]] Result<Rows> void_invoice(const State& state, const VoidInvoice& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> set_billing_details(const State& state, const SetBillingDetails& c);
[[nodiscard]] Result<Rows> create_credit_note(const State& state, const CreateCreditNote& c,
                                              TimeMs now_ms);

// The tenant's invoice for the month starting at month_ms that is not void, or null.
const Invoice* live_invoice(const State& state, const std::string& tenant_id, TimeMs month_ms);

}  // namespace allot
