// The money domain's commands: prices, top-ups and billing modes, invoices and credit notes,
// budgets.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/type_list.h"
#include "core/model/budget.h"
#include "core/model/invoice.h"
#include "ledger/ledger.h"
#include "meter/rating.h"

namespace allot {

// One ledger transfer as it was asked, at its position in the ledger's journal.
struct LedgerEntry {
  int64_t seq = 0;
  ledger::Transfer transfer;

  bool operator==(const LedgerEntry&) const = default;
};

// A price for a GPU model x region x price class from `price.effective_ms` on (0: now).
struct SetPrice {
  meter::Price price;
};

// Money paid in (or, as `credit`, a promotional credit given) to a tenant. `id` is the caller's
// idempotency key: the same top-up again changes nothing; another with the same id is refused.
struct Topup {
  std::string id;
  std::string tenant_id;
  int64_t amount_micros = 0;
  bool credit = false;
  TimeMs expires_at_ms = 0;  // A credit: when what is left of it lapses; 0: never.
};

// How a tenant pays: prepaid, or postpaid with a credit limit (0: none).
struct SetBilling {
  std::string tenant_id;
  BillingMode mode = BillingMode::kPostpaid;
  int64_t credit_limit_micros = 0;
};

// Replaces the tenant's billing details (what its invoices say about it as a customer).
struct SetBillingDetails {
  std::string tenant_id;
  BillingDetails details;
};

// Drafts the tenant's invoice for the month starting at month_ms with lines from the billing
// drafter; re-drafting the month's draft replaces its lines (and keeps its id). `id` is used when
// the month has no invoice that is not void.
struct DraftInvoice {
  std::string id;
  std::string tenant_id;
  TimeMs month_ms = 0;
  TimeMs period_start_ms = 0;  // Within the month: see Invoice.
  TimeMs period_end_ms = 0;
  std::vector<InvoiceLine> lines;
  int64_t credits_micros = 0;
  bool prepaid = false;
  BalancePayments payments;
  BillingDetails customer;  // The tenant's billing details as drafted.
};

// Numbers a draft and makes it immutable. Before the month has ended only when `early`: the
// invoice then bills usage up to where its draft read it, and the next month's invoice the rest.
struct FinalizeInvoice {
  std::string id;
  bool early = false;
};

struct MarkInvoicePaid {
  std::string id;
};

// A draft or final invoice that is not paid stops counting; a final one keeps its number.
struct VoidInvoice {
  std::string id;
};

// Gives back part or all of what is left un-credited of a final or paid invoice.
struct CreateCreditNote {
  std::string id;
  std::string invoice_id;
  int64_t amount_micros = 0;
  std::string reason;
};

// Sets the budget of a tenant, or of one of its projects, replacing the one there is; `id` is
// used when there is none.
struct SetBudget {
  std::string id;
  std::string tenant_id;
  std::string project_id;  // Empty: the whole tenant.
  int64_t amount_micros = 0;
  std::vector<int64_t> thresholds_pct = {50, 80, 100};
  std::string webhook_url;  // Empty: no webhook.
  std::string webhook_secret;
  Enforcement enforcement = Enforcement::kNone;
};

struct DeleteBudget {
  std::string id;
};

using MoneyCommands =
    TypeList<SetPrice, Topup, SetBilling, SetBillingDetails, DraftInvoice, FinalizeInvoice,
             MarkInvoicePaid, VoidInvoice, CreateCreditNote, SetBudget, DeleteBudget>;
using MoneyRows =
    TypeList<meter::Price, ledger::Account, LedgerEntry, Invoice, CreditNote, Budget, BudgetAlert>;

}  // namespace allot
