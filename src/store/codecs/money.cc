#include "store/codecs/money.h"

#include "store/budget_store.h"
#include "store/cluster_json.h"
#include "store/invoice_json.h"
#include "store/ledger_journal.h"

namespace allot {
namespace {

constexpr DocumentCodec<meter::Price> kPrices{
    .table = "prices",
    .keys = "gpu_model, region, price_class, effective_at_ms",
    .encode = price_document,
    .decode = price_from_document,
    .conflict = "gpu_model, region, price_class, effective_at_ms"};
constexpr DocumentCodec<Invoice> kInvoices{.table = "invoices",
                                           .keys = "id, tenant_id, month_ms, status, number",
                                           .encode = invoice_document,
                                           .decode = invoice_from_document,
                                           .updated = "status, number"};
// Credit notes are never changed once written: a plain insert.
constexpr DocumentCodec<CreditNote> kCreditNotes{.table = "credit_notes",
                                                 .keys = "id, invoice_id, tenant_id, number",
                                                 .encode = credit_note_document,
                                                 .decode = credit_note_from_document,
                                                 .conflict = "",
                                                 .order = "id"};
constexpr DocumentCodec<Budget> kBudgets{.table = "budgets",
                                         .keys = "id, tenant_id",
                                         .encode = budget_document,
                                         .decode = budget_from_document};
constexpr auto kBudgetAlertColumns =
    ALLOT_COLUMNS(BudgetAlert, budget_id, month, threshold_pct, spend_micros, at_ms);
// A threshold alerts again in the same month once a changed amount re-arms it.
constexpr ColumnCodec<BudgetAlert> kBudgetAlerts{.table = "budget_alerts",
                                                 .columns = kBudgetAlertColumns,
                                                 .conflict = "budget_id, month, threshold_pct",
                                                 .updated = "spend_micros, at_ms"};

}  // namespace

// The ledger's accounts and transfers are loaded apart, as the ledger (Store::load_ledger).
Status write_row(Db& db, const ledger::Account& o) {
  return write_ledger_accounts(db, std::span(&o, 1));
}

Status load_rows(Db& /*db*/, Tag<ledger::Account> /*tag*/, std::vector<Row>& /*out*/) { return {}; }

Status write_row(Db& db, const LedgerEntry& o) {
  return write_transfers(db, std::span(&o.transfer, 1), o.seq);
}

Status load_rows(Db& /*db*/, Tag<LedgerEntry> /*tag*/, std::vector<Row>& /*out*/) { return {}; }

const DocumentCodec<meter::Price>& codec_of(Tag<meter::Price> /*tag*/) { return kPrices; }
const DocumentCodec<Invoice>& codec_of(Tag<Invoice> /*tag*/) { return kInvoices; }
const DocumentCodec<CreditNote>& codec_of(Tag<CreditNote> /*tag*/) { return kCreditNotes; }
const DocumentCodec<Budget>& codec_of(Tag<Budget> /*tag*/) { return kBudgets; }
const ColumnCodec<BudgetAlert>& codec_of(Tag<BudgetAlert> /*tag*/) { return kBudgetAlerts; }

}  // namespace allot
