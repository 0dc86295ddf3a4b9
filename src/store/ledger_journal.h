// The ledger's journal on a Db: the Store's ledger calls, written once for both backends.
#pragma once

#include <span>

#include "ledger/ledger.h"
#include "store/db.h"

namespace allot {

[[nodiscard]] Status write_ledger_accounts(Db& db, std::span<const ledger::Account> accounts);
// Many rows per statement, so a batch of thousands costs a few statements.
[[nodiscard]] Status write_transfers(Db& db, std::span<const ledger::Transfer> transfers,
                                     int64_t first_seq);
[[nodiscard]] Result<ledger::Ledger> read_ledger(Db& db);

}  // namespace allot
