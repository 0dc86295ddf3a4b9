// Invoices and credit notes: what a tenant is billed for one calendar month (UTC), and what is
// later given back against it. The lines come from the billing drafter (src/billing); the core
// keeps the lifecycle: draft -> final (numbered, immutable) -> paid, or void; credit notes
// against final or paid invoices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "core/model/identity.h"
#include "meter/rating.h"

namespace allot {

// Voiding and re-issuing one tenant's month more often than this is a mistake, not billing; the
// limit also bounds how many invoices the state can hold (tenants x months x this).
inline constexpr size_t kMaxInvoicesPerTenantMonth = 100;

enum class InvoiceStatus { kDraft, kFinal, kPaid, kVoid };

std::string_view invoice_status_name(InvoiceStatus status);
std::optional<InvoiceStatus> parse_invoice_status(std::string_view name);

// One line: the tenant's use of one project on one GPU model x region x price class, its
// volumes' storage in one region (key.storage()), or its calls to another tenant's shared
// service at one pair of prices (service()).
struct InvoiceLine {
  std::string project_id;
  meter::PriceKey key;
  int64_t gpu_milli_seconds = 0;  // GPU milli x seconds within the month.
  int64_t gb_seconds = 0;         // Storage lines: provisioned GB x seconds within the month.
  int64_t amount_micros = 0;
  // What the line's work used and emitted in the month (shown, not charged).
  int64_t energy_mj = 0;
  int64_t carbon_ug = 0;
  // Service lines: the service, the answered requests and the tokens billed, at these prices.
  std::string service_id;
  int64_t requests = 0;
  int64_t tokens = 0;
  int64_t price_per_request_micros = 0;
  int64_t price_per_1k_tokens_micros = 0;

  bool operator==(const InvoiceLine&) const = default;
  bool service() const { return !service_id.empty(); }
};

// What a prepaid tenant's balance has already paid of an invoice: the ledger's usage postings
// from its prepaid account. Usage is posted as it accrues (every rating interval), so a month's
// postings run to thousands; the invoice names how many there were and the first and last, and
// the tenant's ledger statement lists each.
struct BalancePayments {
  int64_t paid_micros = 0;  // Of the invoice's total, what the balance has paid.
  int64_t transfers = 0;    // The usage postings from the prepaid account within the period.
  std::string first_transfer_id;
  std::string last_transfer_id;

  bool operator==(const BalancePayments&) const = default;
};

struct Invoice {
  std::string id;  // "inv_" + 16 hex
  std::string tenant_id;
  TimeMs month_ms = 0;  // The first moment of the month billed.
  // The usage billed is that within [period_start_ms, period_end_ms): the month, except that an
  // invoice finalized early ends where its draft read usage, and the next month's invoice starts
  // there (it carries the rest of the month), so that no usage is billed twice or lost.
  TimeMs period_start_ms = 0;
  TimeMs period_end_ms = 0;
  bool early = false;    // Finalized before its month ended, on purpose.
  bool prepaid = false;  // The tenant paid from a prepaid balance when it was drafted.
  // The tenant's billing details as of its last draft: a final invoice keeps what it was sent
  // with, whatever the tenant's details become.
  BillingDetails customer;
  BalancePayments payments;
  InvoiceStatus status = InvoiceStatus::kDraft;
  std::string number;  // "INV-000001" from finalizing on; a void final invoice keeps it.
  std::vector<InvoiceLine> lines;
  int64_t subtotal_micros = 0;  // The sum of the lines.
  int64_t credits_micros = 0;   // Promotional credits applied in the month.
  int64_t total_micros = 0;     // subtotal - credits.
  int64_t credited_micros = 0;  // The sum of the credit notes against it.
  // What the payment recorded by marking it paid paid in (its ledger transfer "invoice/ID/paid").
  int64_t payment_micros = 0;
  TimeMs created_at_ms = 0;
  TimeMs drafted_at_ms = 0;  // The last (re-)draft.
  TimeMs finalized_at_ms = 0;
  TimeMs paid_at_ms = 0;
  TimeMs voided_at_ms = 0;

  bool operator==(const Invoice&) const = default;
  // What credit notes may still give back: its total less what they already gave.
  int64_t uncredited_micros() const { return total_micros - credited_micros; }
  // What the tenant still owes on it: its total less what credit notes gave back, what its
  // prepaid balance already paid and what a recorded payment paid (never below zero).
  int64_t due_micros() const {
    return std::max<int64_t>(0, uncredited_micros() - payments.paid_micros - payment_micros);
  }
};

struct CreditNote {
  std::string id;  // "crn_" + 16 hex
  std::string invoice_id;
  std::string tenant_id;
  std::string number;  // "CN-000001"
  int64_t amount_micros = 0;
  std::string reason;
  TimeMs created_at_ms = 0;

  bool operator==(const CreditNote&) const = default;
};

// "INV-000001" for 1: documents are numbered in one sequence each, without gaps.
std::string document_number(std::string_view prefix, int64_t n);

}  // namespace allot
