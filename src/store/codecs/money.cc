#include "store/codecs/money.h"

#include "store/budget_store.h"
#include "store/cluster_json.h"
#include "store/invoice_json.h"
#include "store/ledger_journal.h"

namespace allot {
// The ledger's accounts and transfers are loaded apart, as the ledger (Store::load_ledger).
Status write_row(Db& db, const ledger::Account& o) {
  return write_ledger_accounts(db, std::span(&o, 1));
}

Status load_rows(Db& /*db*/, Tag<ledger::Account> /*tag*/, std::vector<Row>& /*out*/) { return {}; }

Status write_row(Db& db, const LedgerEntry& o) {
  return write_transfers(db, std::span(&o.transfer, 1), o.seq);
}

Status load_rows(Db& /*db*/, Tag<LedgerEntry> /*tag*/, std::vector<Row>& /*out*/) { return {}; }

Status write_row(Db& db, const BudgetAlert& o) { return write_budget_row(db, o); }

Status load_rows(Db& db, Tag<BudgetAlert> /*tag*/, std::vector<Row>& out) {
  return load_budget_alerts(db, out);
}

const DocumentCodec<meter::Price>& codec_of(Tag<meter::Price> /*tag*/) {
  static const DocumentCodec<meter::Price> kCodec{
      .table = "prices",
      .upsert =
          "INSERT INTO prices (gpu_model, region, price_class, effective_at_ms, doc) "
          "VALUES ($1, $2, $3, $4, $5) "
          "ON CONFLICT (gpu_model, region, price_class, effective_at_ms) DO UPDATE SET doc = "
          "excluded.doc",
      .order = "gpu_model, region, price_class, effective_at_ms",
      .columns =
          [](const meter::Price& o) {
            return std::vector<DbValue>{o.key.model, o.key.region,
                                        std::string(price_class_name(o.key.price_class)),
                                        o.effective_ms};
          },
      .encode = price_document,
      .decode = price_from_document};
  return kCodec;
}

const DocumentCodec<Invoice>& codec_of(Tag<Invoice> /*tag*/) {
  static const DocumentCodec<Invoice> kCodec{
      .table = "invoices",
      .upsert =
          "INSERT INTO invoices (id, tenant_id, month_ms, status, number, doc) "
          "VALUES ($1, $2, $3, $4, $5, $6) "
          "ON CONFLICT (id) DO UPDATE SET status = excluded.status, number = excluded.number, "
          "doc = excluded.doc",
      .order = "id",
      .columns =
          [](const Invoice& o) {
            return std::vector<DbValue>{o.id, o.tenant_id, o.month_ms,
                                        std::string(invoice_status_name(o.status)), o.number};
          },
      .encode = invoice_document,
      .decode = invoice_from_document};
  return kCodec;
}

// Credit notes are never changed once written: a plain insert.
const DocumentCodec<CreditNote>& codec_of(Tag<CreditNote> /*tag*/) {
  static const DocumentCodec<CreditNote> kCodec{
      .table = "credit_notes",
      .upsert =
          "INSERT INTO credit_notes (id, invoice_id, tenant_id, number, doc) "
          "VALUES ($1, $2, $3, $4, $5)",
      .order = "id",
      .columns =
          [](const CreditNote& o) {
            return std::vector<DbValue>{o.id, o.invoice_id, o.tenant_id, o.number};
          },
      .encode = credit_note_document,
      .decode = credit_note_from_document};
  return kCodec;
}

const DocumentCodec<Budget>& codec_of(Tag<Budget> /*tag*/) {
  static const DocumentCodec<Budget> kCodec{
      .table = "budgets",
      .upsert =
          "INSERT INTO budgets (id, tenant_id, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const Budget& o) { return std::vector<DbValue>{o.id, o.tenant_id}; },
      .encode = budget_document,
      .decode = budget_from_document};
  return kCodec;
}

}  // namespace allot
