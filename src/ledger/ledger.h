// A double-entry ledger with TigerBeetle's semantics, in memory and deterministic: accounts and
// transfers, transfer ids as idempotency keys, immutable transfers, two-phase (pending) transfers
// that are posted, voided or expire, balance limits enforced here, and linked transfers that
// succeed or fail together. Amounts are micro-units. Every transfer debits one account and
// credits another by the same amount, so the sum over all accounts is always zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "common/int128.h"

namespace allot::ledger {

struct Account {
  std::string id;
  std::string code;  // What the account is for, e.g. "tenant_cash", "revenue".
  // Balance limits, checked on every transfer: debits (pending and posted) may not pass posted
  // credits (a prepaid balance), or credits may not pass posted debits. At most one.
  bool debits_must_not_exceed_credits = false;
  bool credits_must_not_exceed_debits = false;
  int64_t user_data = 0;  // The owner's own datum, e.g. when a promotional credit expires.
  int64_t debits_pending = 0;
  int64_t debits_posted = 0;
  int64_t credits_pending = 0;
  int64_t credits_posted = 0;
  TimeMs created_at_ms = 0;

  bool operator==(const Account&) const = default;
  // Posted credits less posted debits: what a credit-normal account (a tenant's cash) holds.
  int64_t credit_balance() const { return credits_posted - debits_posted; }
};

enum class TransferKind {
  kSingle,       // Posted at once.
  kPending,      // A hold: reserves the amount on both accounts until posted, voided or expired.
  kPostPending,  // Posts a pending transfer (`amount` 0: its whole amount; less: the rest is
                 // freed).
  kVoidPending,  // Frees a pending transfer.
};

struct Transfer {
  std::string id;  // The idempotency key.
  std::string debit_account_id;
  std::string credit_account_id;
  int64_t amount = 0;
  TransferKind kind = TransferKind::kSingle;
  std::string pending_id;  // For post and void: the pending transfer.
  int64_t timeout_ms = 0;  // For pending: expires this long after it was made; 0 never.
  bool linked = false;     // Succeeds or fails with the next transfer of the same batch.
  std::string code;        // What it is for, e.g. "topup", "usage".
  TimeMs created_at_ms = 0;

  bool operator==(const Transfer&) const = default;
};

enum class PendingState { kPending, kPosted, kVoided, kExpired };

class Ledger {
 public:
  // Creates an account. The same id with the same fields again is harmless; with other fields,
  // kConflict.
  [[nodiscard]] Status create_account(const Account& account, TimeMs now_ms);
  // Takes back an account that no transfer has touched (one made for a change that failed).
  void remove_empty_account(const std::string& id);

  // Applies a batch in order and returns one result per transfer. A transfer whose id exists
  // with the same fields succeeds without effect; with other fields it fails with kConflict. A
  // chain of linked transfers (each `linked` but the last) is applied whole or not at all: when
  // one fails, every transfer of the chain fails and nothing of it stays.
  std::vector<Status> create_transfers(std::span<const Transfer> transfers, TimeMs now_ms);
  // One transfer on its own.
  [[nodiscard]] Status create_transfer(const Transfer& transfer, TimeMs now_ms);

  // Expires the pending transfers whose timeout has passed at `now_ms`, freeing their amounts.
  // Returns their ids.
  std::vector<std::string> expire(TimeMs now_ms);

  const Account* account(const std::string& id) const;
  const Transfer* transfer(const std::string& id) const;
  // The state of a pending transfer, or nullopt when `id` is not one.
  std::optional<PendingState> pending_state(const std::string& id) const;
  const std::map<std::string, Account>& accounts() const { return accounts_; }
  const std::vector<Transfer>& transfers() const { return log_; }
  // Each transfer as it was asked (what a journal stores and a retry must repeat), with the time
  // it was made; parallel to transfers().
  const std::vector<Transfer>& requests() const { return requests_; }

  // Sums over all accounts of credits less debits, posted and pending: both are zero unless the
  // ledger is broken.
  struct Sums {
    Int128 posted = 0;
    Int128 pending = 0;
  };
  Sums sums() const;

 private:
  // What applying one transfer changed, so that a failed chain can be taken back.
  struct Undo {
    std::vector<Account> accounts;  // Their values before the chain.
    std::vector<std::pair<std::string, PendingState>> pending;
    size_t log_size = 0;
  };

  // Checks and applies one transfer; on failure nothing of it is applied.
  Status apply(const Transfer& t, TimeMs now_ms, Undo* undo);
  void roll_back(const Undo& undo);

  std::map<std::string, Account> accounts_;
  std::map<std::string, size_t> transfer_index_;  // id -> position in log_
  std::vector<Transfer> log_;
  std::vector<Transfer> requests_;  // What each transfer of log_ was asked as, for retries.
  std::map<std::string, PendingState> pending_;  // Pending transfers' ids -> state.
  std::multimap<TimeMs, std::string> expiries_;  // When each timed pending one expires.
};

}  // namespace allot::ledger
