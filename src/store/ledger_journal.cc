#include "store/ledger_journal.h"

#include <fmt/format.h>

namespace allot {
namespace {

constexpr size_t kTransferColumns = 11;
constexpr size_t kRowsPerStatement = 500;  // 5,500 parameters: within both backends' limits.

int64_t limits_of(const ledger::Account& a) {
  return (a.debits_must_not_exceed_credits ? 1 : 0) | (a.credits_must_not_exceed_debits ? 2 : 0);
}

std::string insert_statement(size_t rows) {
  std::string sql =
      "INSERT INTO ledger_transfers (seq, id, debit_account_id, credit_account_id, amount, kind, "
      "pending_id, timeout_ms, linked, code, created_at_ms) VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ",(";
    for (size_t c = 0; c < kTransferColumns; ++c) {
      sql += fmt::format("{}${}", c == 0 ? "" : ",", r * kTransferColumns + c + 1);
    }
    sql += ")";
  }
  return sql;
}

}  // namespace

Status write_ledger_accounts(Db& db, std::span<const ledger::Account> accounts) {
  for (const ledger::Account& a : accounts) {
    const DbValue p[] = {a.id, a.code, limits_of(a), a.created_at_ms, a.user_data};
    if (auto ok =
            db.exec("INSERT INTO ledger_accounts (id, code, limits, created_at_ms, user_data) "
                    "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                    p);
        !ok) {
      return ok;
    }
  }
  return {};
}

Status write_transfers(Db& db, std::span<const ledger::Transfer> transfers, int64_t first_seq) {
  std::vector<DbValue> params;
  for (size_t start = 0; start < transfers.size(); start += kRowsPerStatement) {
    const size_t rows = std::min(kRowsPerStatement, transfers.size() - start);
    params.clear();
    params.reserve(rows * kTransferColumns);
    for (size_t r = 0; r < rows; ++r) {
      const ledger::Transfer& t = transfers[start + r];
      params.insert(params.end(),
                    {DbValue{first_seq + static_cast<int64_t>(start + r)}, t.id, t.debit_account_id,
                     t.credit_account_id, t.amount, int64_t{static_cast<int>(t.kind)}, t.pending_id,
                     t.timeout_ms, int64_t{t.linked ? 1 : 0}, t.code, t.created_at_ms});
    }
    if (auto ok = db.exec(insert_statement(rows), params); !ok) return ok;
  }
  return {};
}

Result<ledger::Ledger> read_ledger(Db& db) {
  ledger::Ledger out;
  auto accounts = db.query(
      "SELECT id, code, limits, created_at_ms, user_data FROM ledger_accounts ORDER BY id", {});
  if (!accounts) return std::unexpected(accounts.error());
  for (const DbRow& r : *accounts) {
    const int64_t limits = db_int(r[2]);
    const ledger::Account account{.id = db_text(r[0]),
                                  .code = db_text(r[1]),
                                  .debits_must_not_exceed_credits = (limits & 1) != 0,
                                  .credits_must_not_exceed_debits = (limits & 2) != 0,
                                  .user_data = db_int(r[4])};
    if (auto ok = out.create_account(account, db_int(r[3])); !ok)
      return std::unexpected(ok.error());
  }
  auto rows = db.query(
      "SELECT seq, id, debit_account_id, credit_account_id, amount, kind, pending_id, timeout_ms, "
      "linked, code, created_at_ms FROM ledger_transfers ORDER BY seq",
      {});
  if (!rows) return std::unexpected(rows.error());
  // Replayed as they were made, linked chains together, each at its own time.
  std::vector<ledger::Transfer> chain;
  for (const DbRow& r : *rows) {
    chain.push_back(ledger::Transfer{.id = db_text(r[1]),
                                     .debit_account_id = db_text(r[2]),
                                     .credit_account_id = db_text(r[3]),
                                     .amount = db_int(r[4]),
                                     .kind = static_cast<ledger::TransferKind>(db_int(r[5])),
                                     .pending_id = db_text(r[6]),
                                     .timeout_ms = db_int(r[7]),
                                     .linked = db_int(r[8]) != 0,
                                     .code = db_text(r[9]),
                                     .created_at_ms = db_int(r[10])});
    if (chain.back().linked) continue;
    const TimeMs at = chain.back().created_at_ms;
    for (const Status& result : out.create_transfers(chain, at)) {
      if (!result) {
        return fail(ErrorCode::kInternal,
                    fmt::format("the stored ledger does not replay at seq {}: {}", db_int(r[0]),
                                result.error().message));
      }
    }
    chain.clear();
  }
  if (!chain.empty()) return fail(ErrorCode::kInternal, "the stored ledger ends inside a chain");
  if (out.sums().posted != 0 || out.sums().pending != 0) {
    return fail(ErrorCode::kInternal, "the stored ledger does not sum to zero");
  }
  return out;
}

}  // namespace allot
