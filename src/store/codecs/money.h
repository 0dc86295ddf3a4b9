// The money domain's rows in the store: prices, ledger accounts and transfers, invoices, credit
// notes, budgets and their alerts.
#pragma once

#include "store/codecs/columns.h"

namespace allot {

const DocumentCodec<meter::Price>& codec_of(Tag<meter::Price> tag);
const DocumentCodec<Invoice>& codec_of(Tag<Invoice> tag);
const DocumentCodec<CreditNote>& codec_of(Tag<CreditNote> tag);
[[nodiscard]] Status write_row(Db& db, const ledger::Account& account);
[[nodiscard]] Status load_rows(Db& db, Tag<ledger::Account> tag, std::vector<Row>& out);
[[nodiscard]] Status write_row(Db& db, const LedgerEntry& entry);
[[nodiscard]] Status load_rows(Db& db, Tag<LedgerEntry> tag, std::vector<Row>& out);
const DocumentCodec<Budget>& codec_of(Tag<Budget> tag);
const ColumnCodec<BudgetAlert>& codec_of(Tag<BudgetAlert> tag);

}  // namespace allot
