// The invoice lifecycle. A draft may be re-drafted as often as wanted; finalizing numbers it and
// freezes it, because a number once sent to a customer must always mean the same document. What
// is wrong on a final invoice is put right by a credit note or by voiding it, never by an edit.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"
#include "core/model/accounts.h"
#include "core/money/invoices.h"
#include "core/money/money_internal.h"

namespace allot {
namespace {

// Money an invoice moves between an operator account and the tenant's account of the invoice's
// billing mode: a recorded payment comes in from funding, a credit note gives back out of revenue.
// The changed invoice and credit note (rest) are written with the transfer, all at once.
Rows post_for_invoice(const State& state, const Invoice& invoice, ledger::Transfer transfer,
                      Rows rest) {
  Draft draft(state);
  money::ensure_account(draft,
                        ledger::Account{.id = transfer.debit_account_id, .code = "operator"});
  transfer.credit_account_id = tenant_account(
      invoice.tenant_id, invoice.prepaid ? BillingMode::kPrepaid : BillingMode::kPostpaid);
  money::ensure_account(draft, ledger::Account{.id = transfer.credit_account_id,
                                               .code = "tenant",
                                               .debits_must_not_exceed_credits = invoice.prepaid});
  if (transfer.amount > 0) draft.add_transfer(transfer);
  Rows rows = draft.rows();
  rows.insert(rows.begin(), rest.begin(), rest.end());
  return rows;
}

Error frozen(const Invoice& invoice, std::string_view what) {
  return Error{ErrorCode::kConflict, fmt::format("invoice {} is {}: it cannot be {}", invoice.id,
                                                 invoice_status_name(invoice.status), what)};
}

// The lines' sum, checked: a subtotal that leaves int64 is refused rather than wrapped.
Result<int64_t> subtotal_of(const std::vector<InvoiceLine>& lines) {
  int64_t sum = 0;
  for (const InvoiceLine& line : lines) {
    if (line.amount_micros < 0 || line.gpu_milli_seconds < 0 || line.gb_seconds < 0) {
      return fail(ErrorCode::kInvalidArgument, "an invoice line cannot be negative");
    }
    if (__builtin_add_overflow(sum, line.amount_micros, &sum)) {
      return fail(ErrorCode::kOverflow, "the invoice's subtotal leaves the range of amounts");
    }
  }
  return sum;
}

// The invoice `id` moved to `to`, if it is in one of the states `from`, with the moment stamped.
Result<Invoice> move_invoice(const State& state, const std::string& id,
                             std::initializer_list<InvoiceStatus> from, InvoiceStatus to,
                             TimeMs Invoice::* stamp, TimeMs now_ms, std::string_view what) {
  const Invoice* current = state.invoice(id);
  if (current == nullptr) return std::unexpected(not_found("invoice", id));
  if (std::find(from.begin(), from.end(), current->status) == from.end()) {
    return std::unexpected(frozen(*current, what));
  }
  Invoice next = *current;
  next.status = to;
  next.*stamp = now_ms;
  return next;
}

// A draft's period lies within its month, except that it may start in the month before, where
// that month's invoice was finalized early (it carries the rest of that month).
Status check_period(const DraftInvoice& c) {
  if (c.period_start_ms < month_start(c.month_ms - 1) || c.period_start_ms > c.month_ms ||
      c.period_end_ms < c.period_start_ms || c.period_end_ms > next_month_start(c.month_ms)) {
    return fail(ErrorCode::kInvalidArgument, "an invoice's period must lie within its month");
  }
  return {};
}

// Finalizing before the month has ended is refused unless asked for: an invoice sent then bills
// only part of the month. After the month has ended, the draft must cover all of its period, or
// the usage between where it read and the month's end would never be billed.
Status check_finalizable(const Invoice& invoice, bool early, TimeMs now_ms) {
  const TimeMs month_end_ms = next_month_start(invoice.month_ms);
  if (now_ms < month_end_ms) {
    if (early) return {};
    return fail(ErrorCode::kPeriodOpen,
                fmt::format("the month {} has not ended: finalize it early on purpose (early: "
                            "true) or wait until {}",
                            format_month(invoice.month_ms), format_time(month_end_ms)));
  }
  if (invoice.period_end_ms < month_end_ms) {
    return fail(ErrorCode::kConflict,
                fmt::format("invoice {} was drafted before its month ended: re-draft it to bill "
                            "the whole month, then finalize it",
                            invoice.id));
  }
  return {};
}

// Text printed on an invoice: at most `most` bytes, no control characters but line breaks where
// `lines` allows them.
Status check_document_text(std::string_view field, std::string_view text, size_t most, bool lines) {
  if (text.size() > most) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must be at most {} bytes", field, most));
  }
  for (unsigned char c : text) {
    if ((c < 0x20 && !(lines && c == '\n')) || c == 0x7f) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must not hold control characters{}", field,
                              lines ? " (line breaks are fine)" : ""));
    }
  }
  return {};
}

}  // namespace

const Invoice* live_invoice(const State& state, const std::string& tenant_id, TimeMs month_ms) {
  for (const auto& [id, invoice] : state.invoices) {
    if (invoice.tenant_id == tenant_id && invoice.month_ms == month_ms &&
        invoice.status != InvoiceStatus::kVoid) {
      return &invoice;
    }
  }
  return nullptr;
}

Result<Rows> apply(const State& state, const DraftInvoice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (state.tenant(c.tenant_id) == nullptr) {
    return std::unexpected(not_found("tenant", c.tenant_id));
  }
  if (month_start(c.month_ms) != c.month_ms) {
    return fail(ErrorCode::kInvalidArgument, "an invoice's month starts at its first moment");
  }
  if (c.month_ms > now_ms) {
    return fail(ErrorCode::kInvalidArgument, "a month that has not begun cannot be invoiced");
  }
  if (auto ok = check_period(c); !ok) return std::unexpected(ok.error());
  auto subtotal = subtotal_of(c.lines);
  if (!subtotal) return std::unexpected(subtotal.error());
  if (c.payments.paid_micros < 0 || c.payments.paid_micros > *subtotal - c.credits_micros) {
    return fail(ErrorCode::kInvalidArgument,
                "what the balance paid must be between 0 and the invoice's total");
  }
  if (c.credits_micros < 0 || c.credits_micros > *subtotal) {
    return fail(ErrorCode::kInvalidArgument, "credits must be between 0 and the subtotal");
  }
  Invoice invoice;
  if (const Invoice* existing = live_invoice(state, c.tenant_id, c.month_ms)) {
    if (existing->status != InvoiceStatus::kDraft)
      return std::unexpected(frozen(*existing, "re-drafted"));
    invoice = *existing;
  } else {
    if (auto ok = check_id("id", c.id, "inv"); !ok) return std::unexpected(ok.error());
    if (state.invoice(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "invoice id taken");
    const auto same_month =
        std::count_if(state.invoices.begin(), state.invoices.end(), [&](const auto& e) {
          return e.second.tenant_id == c.tenant_id && e.second.month_ms == c.month_ms;
        });
    if (static_cast<size_t>(same_month) >= kMaxInvoicesPerTenantMonth) {
      return fail(ErrorCode::kLimitExceeded, "the month holds the most invoices it may");
    }
    invoice = Invoice{
        .id = c.id, .tenant_id = c.tenant_id, .month_ms = c.month_ms, .created_at_ms = now_ms};
  }
  invoice.period_start_ms = c.period_start_ms;
  invoice.period_end_ms = c.period_end_ms;
  invoice.prepaid = c.prepaid;
  invoice.customer = c.customer;
  invoice.payments = c.payments;
  invoice.lines = c.lines;
  invoice.subtotal_micros = *subtotal;
  invoice.credits_micros = c.credits_micros;
  invoice.total_micros = *subtotal - c.credits_micros;
  invoice.drafted_at_ms = now_ms;
  return Rows{invoice};
}

Result<Rows> apply(const State& state, const FinalizeInvoice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto moved = move_invoice(state, c.id, {InvoiceStatus::kDraft}, InvoiceStatus::kFinal,
                            &Invoice::finalized_at_ms, now_ms, "finalized");
  if (!moved) return std::unexpected(moved.error());
  if (auto ok = check_finalizable(*moved, c.early, now_ms); !ok) return std::unexpected(ok.error());
  moved->early = now_ms < next_month_start(moved->month_ms);
  moved->number = document_number("INV", state.invoices_numbered + 1);
  return Rows{*moved};
}

Result<Rows> apply(const State& state, const MarkInvoicePaid& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto moved = move_invoice(state, c.id, {InvoiceStatus::kFinal}, InvoiceStatus::kPaid,
                            &Invoice::paid_at_ms, now_ms, "marked paid (only final invoices can)");
  if (!moved) return std::unexpected(moved.error());
  // What is due is paid in: the tenant's account no longer owes it.
  moved->payment_micros = moved->due_micros();
  return post_for_invoice(state, *moved,
                          ledger::Transfer{.id = fmt::format("invoice/{}/paid", moved->id),
                                           .debit_account_id = std::string(kFundingAccount),
                                           .amount = moved->payment_micros,
                                           .code = "invoice_payment"},
                          Rows{*moved});
}

Result<Rows> apply(const State& state, const VoidInvoice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  // Money already given back against an invoice must stay tied to a document that counts.
  if (const Invoice* current = state.invoice(c.id);
      current != nullptr && current->credited_micros > 0) {
    return std::unexpected(frozen(*current, "voided: it has credit notes"));
  }
  auto moved = move_invoice(state, c.id, {InvoiceStatus::kDraft, InvoiceStatus::kFinal},
                            InvoiceStatus::kVoid, &Invoice::voided_at_ms, now_ms,
                            "voided (paid invoices take credit notes instead)");
  if (!moved) return std::unexpected(moved.error());
  return Rows{*moved};
}

Status check_billing_details(const State& state, const SetBillingDetails& c) {
  if (state.tenant(c.tenant_id) == nullptr) {
    return std::unexpected(not_found("tenant", c.tenant_id));
  }
  const BillingDetails& d = c.details;
  for (const auto& [field, text, most] :
       {std::tuple<std::string_view, const std::string&, size_t>{"legal_name", d.legal_name,
                                                                 limits::kMaxBillingLineBytes},
        {"tax_id", d.tax_id, limits::kMaxBillingLineBytes},
        {"email", d.email, limits::kMaxBillingLineBytes},
        {"address", d.address, limits::kMaxBillingAddressBytes}}) {
    if (auto ok = check_document_text(field, text, most, field == "address"); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (!d.email.empty() && (d.email.find('@') == std::string::npos || d.email.front() == '@' ||
                           d.email.back() == '@' || d.email.find(' ') != std::string::npos)) {
    return fail(ErrorCode::kInvalidArgument, "email must be an address like billing@example.com");
  }
  return {};
}

Result<Rows> apply(const State& state, const SetBillingDetails& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  if (auto ok = check_billing_details(state, c); !ok) return std::unexpected(ok.error());
  Tenant next = *state.tenant(c.tenant_id);
  next.details = c.details;
  return Rows{next};
}

Result<Rows> apply(const State& state, const CreateCreditNote& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const Invoice* current = state.invoice(c.invoice_id);
  if (current == nullptr) return std::unexpected(not_found("invoice", c.invoice_id));
  if (auto ok = check_id("id", c.id, "crn"); !ok) return std::unexpected(ok.error());
  if (state.credit_notes.contains(c.id)) {
    return fail(ErrorCode::kAlreadyExists, "credit note id taken");
  }
  if (auto ok = check_name("reason", c.reason); !ok) return std::unexpected(ok.error());
  if (current->status != InvoiceStatus::kFinal && current->status != InvoiceStatus::kPaid) {
    return std::unexpected(frozen(*current, "credited (only final or paid invoices can)"));
  }
  if (c.amount_micros <= 0) {
    return fail(ErrorCode::kInvalidArgument, "a credit note's amount must be more than 0");
  }
  if (c.amount_micros > current->uncredited_micros()) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("a credit note can give back at most what is left un-credited of "
                    "invoice {}: {} (asked: {})",
                    current->number, Money::from_micros(current->uncredited_micros()).to_string(),
                    Money::from_micros(c.amount_micros).to_string()));
  }
  Invoice credited = *current;
  credited.credited_micros += c.amount_micros;
  CreditNote note{.id = c.id,
                  .invoice_id = current->id,
                  .tenant_id = current->tenant_id,
                  .number = document_number("CN", state.credit_notes_numbered + 1),
                  .amount_micros = c.amount_micros,
                  .reason = c.reason,
                  .created_at_ms = now_ms};
  // What it gives back goes back to the tenant's account: off what is owed, or to spend.
  return post_for_invoice(state, credited,
                          ledger::Transfer{.id = fmt::format("credit-note/{}", note.id),
                                           .debit_account_id = std::string(kRevenueAccount),
                                           .amount = note.amount_micros,
                                           .code = "credit_note"},
                          Rows{credited, note});
}

void put(State& state, const Invoice& invoice) {
  auto old = state.invoices.find(invoice.id);
  const bool had_number = old != state.invoices.end() && !old->second.number.empty();
  if (!had_number && !invoice.number.empty()) ++state.invoices_numbered;
  state.invoices[invoice.id] = invoice;
}

void put(State& state, const CreditNote& note) {
  if (state.credit_notes.insert_or_assign(note.id, note).second) ++state.credit_notes_numbered;
}

}  // namespace allot
