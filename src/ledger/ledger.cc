#include "ledger/ledger.h"

#include <cassert>

#include <fmt/format.h>

namespace allot::ledger {
namespace {

bool same_account_fields(const Account& a, const Account& b) {
  return a.id == b.id && a.code == b.code &&
         a.debits_must_not_exceed_credits == b.debits_must_not_exceed_credits &&
         a.credits_must_not_exceed_debits == b.credits_must_not_exceed_debits &&
         a.user_data == b.user_data;
}

// The fields a client sends: a retry must repeat them exactly.
bool same_request(const Transfer& a, const Transfer& b) {
  return a.id == b.id && a.debit_account_id == b.debit_account_id &&
         a.credit_account_id == b.credit_account_id && a.amount == b.amount && a.kind == b.kind &&
         a.pending_id == b.pending_id && a.timeout_ms == b.timeout_ms && a.linked == b.linked &&
         a.code == b.code;
}

Status add(int64_t& field, int64_t amount) {
  if (__builtin_add_overflow(field, amount, &field)) {
    return fail(ErrorCode::kOverflow, "the amount would overflow an account's balance");
  }
  return {};
}

// A transfer moves its amount onto the debit account's debits and the credit account's credits.
Status add_both(int64_t& debits, int64_t& credits, int64_t amount) {
  Status ok = add(debits, amount);
  if (ok) ok = add(credits, amount);
  return ok;
}

Status within_limits(const Account& a) {
  if (a.debits_must_not_exceed_credits &&
      static_cast<Int128>(a.debits_pending) + a.debits_posted > a.credits_posted) {
    return fail(ErrorCode::kInsufficientFunds,
                fmt::format("account {} would be debited past its credits", a.id));
  }
  if (a.credits_must_not_exceed_debits &&
      static_cast<Int128>(a.credits_pending) + a.credits_posted > a.debits_posted) {
    return fail(ErrorCode::kInsufficientFunds,
                fmt::format("account {} would be credited past its debits", a.id));
  }
  return {};
}

bool expired(const Transfer& pending, TimeMs now_ms) {
  return pending.timeout_ms > 0 && now_ms >= pending.created_at_ms + pending.timeout_ms;
}

}  // namespace

Status Ledger::create_account(const Account& account, TimeMs now_ms) {
  if (account.id.empty()) return fail(ErrorCode::kInvalidArgument, "an account needs an id");
  if (account.debits_must_not_exceed_credits && account.credits_must_not_exceed_debits) {
    return fail(ErrorCode::kInvalidArgument, "an account takes at most one balance limit");
  }
  if (account.debits_pending != 0 || account.debits_posted != 0 || account.credits_pending != 0 ||
      account.credits_posted != 0) {
    return fail(ErrorCode::kInvalidArgument, "an account starts empty; transfers fill it");
  }
  if (auto it = accounts_.find(account.id); it != accounts_.end()) {
    if (same_account_fields(it->second, account)) return {};
    return fail(ErrorCode::kConflict,
                fmt::format("account {} exists with other fields", account.id));
  }
  Account created = account;
  created.created_at_ms = now_ms;
  accounts_.emplace(created.id, created);
  return {};
}

void Ledger::remove_empty_account(const std::string& id) {
  auto it = accounts_.find(id);
  if (it == accounts_.end()) return;
  const Account& a = it->second;
  assert(a.debits_pending == 0 && a.debits_posted == 0 && a.credits_pending == 0 &&
         a.credits_posted == 0);
  accounts_.erase(it);
}

Status Ledger::apply(const Transfer& t, TimeMs now_ms, Undo* undo) {
  if (t.id.empty()) return fail(ErrorCode::kInvalidArgument, "a transfer needs an id");
  if (auto it = transfer_index_.find(t.id); it != transfer_index_.end()) {
    if (same_request(requests_[it->second], t)) return {};  // A retry: harmless.
    return fail(ErrorCode::kConflict, fmt::format("transfer {} exists with other fields", t.id));
  }
  Transfer stored = t;
  stored.created_at_ms = now_ms;
  const Transfer* pending = nullptr;
  if (t.kind == TransferKind::kPostPending || t.kind == TransferKind::kVoidPending) {
    auto state = pending_.find(t.pending_id);
    if (state == pending_.end()) {
      return fail(ErrorCode::kNotFound, fmt::format("no pending transfer {}", t.pending_id));
    }
    pending = &log_[transfer_index_.at(t.pending_id)];
    if (state->second != PendingState::kPending) {
      return fail(ErrorCode::kConflict,
                  fmt::format("pending transfer {} is already {}", t.pending_id,
                              state->second == PendingState::kPosted   ? "posted"
                              : state->second == PendingState::kVoided ? "voided"
                                                                       : "expired"));
    }
    if (expired(*pending, now_ms)) {
      return fail(ErrorCode::kConflict, fmt::format("pending transfer {} expired", t.pending_id));
    }
    if ((!t.debit_account_id.empty() && t.debit_account_id != pending->debit_account_id) ||
        (!t.credit_account_id.empty() && t.credit_account_id != pending->credit_account_id)) {
      return fail(ErrorCode::kInvalidArgument, "the accounts differ from the pending transfer's");
    }
    if (t.amount < 0 || t.amount > pending->amount ||
        (t.kind == TransferKind::kVoidPending && t.amount != 0)) {
      return fail(ErrorCode::kInvalidArgument,
                  "a post takes 0 (all) up to the pending amount; a void takes 0");
    }
    stored.debit_account_id = pending->debit_account_id;
    stored.credit_account_id = pending->credit_account_id;
    if (t.kind == TransferKind::kPostPending && t.amount == 0) stored.amount = pending->amount;
  } else {
    if (t.amount <= 0) return fail(ErrorCode::kInvalidArgument, "an amount must be above zero");
    if (!t.pending_id.empty()) {
      return fail(ErrorCode::kInvalidArgument, "only a post or a void names a pending transfer");
    }
    if (t.timeout_ms < 0 || (t.timeout_ms > 0 && t.kind != TransferKind::kPending)) {
      return fail(ErrorCode::kInvalidArgument, "only a pending transfer has a timeout (>= 0)");
    }
    if (t.debit_account_id == t.credit_account_id) {
      return fail(ErrorCode::kInvalidArgument, "a transfer needs two different accounts");
    }
  }
  auto debit = accounts_.find(stored.debit_account_id);
  auto credit = accounts_.find(stored.credit_account_id);
  if (debit == accounts_.end() || credit == accounts_.end()) {
    return fail(ErrorCode::kNotFound,
                fmt::format("no account {}", debit == accounts_.end() ? stored.debit_account_id
                                                                      : stored.credit_account_id));
  }
  Account d = debit->second;
  Account c = credit->second;
  Status ok;
  switch (t.kind) {
    case TransferKind::kSingle:
      ok = add_both(d.debits_posted, c.credits_posted, stored.amount);
      break;
    case TransferKind::kPending:
      ok = add_both(d.debits_pending, c.credits_pending, stored.amount);
      break;
    case TransferKind::kPostPending:
    case TransferKind::kVoidPending:
      d.debits_pending -= pending->amount;
      c.credits_pending -= pending->amount;
      if (t.kind == TransferKind::kPostPending) {
        ok = add_both(d.debits_posted, c.credits_posted, stored.amount);
      }
      break;
  }
  if (ok) ok = within_limits(d);
  if (ok) ok = within_limits(c);
  if (!ok) return ok;
  // Double entry: what the transfer debits is what it credits, and a post or void only ever
  // releases a pending amount that was there.
  assert(d.debits_posted + d.debits_pending - debit->second.debits_posted -
             debit->second.debits_pending ==
         c.credits_posted + c.credits_pending - credit->second.credits_posted -
             credit->second.credits_pending);
  assert(d.debits_pending >= 0 && c.credits_pending >= 0);
  if (undo != nullptr) {
    undo->accounts.push_back(debit->second);
    undo->accounts.push_back(credit->second);
    if (pending != nullptr) undo->pending.emplace_back(t.pending_id, PendingState::kPending);
  }
  debit->second = d;
  credit->second = c;
  if (t.kind == TransferKind::kPending) {
    pending_[t.id] = PendingState::kPending;
    if (t.timeout_ms > 0) expiries_.emplace(now_ms + t.timeout_ms, t.id);
  } else if (pending != nullptr) {
    pending_[t.pending_id] =
        t.kind == TransferKind::kPostPending ? PendingState::kPosted : PendingState::kVoided;
  }
  transfer_index_.emplace(stored.id, log_.size());
  log_.push_back(std::move(stored));
  requests_.push_back(t);
  requests_.back().created_at_ms = now_ms;
  return {};
}

void Ledger::roll_back(const Undo& undo) {
  assert(log_.size() >= undo.log_size && requests_.size() == log_.size());
  // Newest first, so each account ends at its value from before the chain.
  for (auto it = undo.accounts.rbegin(); it != undo.accounts.rend(); ++it) {
    accounts_[it->id] = *it;
  }
  for (const auto& [id, state] : undo.pending) pending_[id] = state;
  while (log_.size() > undo.log_size) {
    const Transfer& last = log_.back();
    transfer_index_.erase(last.id);
    if (last.kind == TransferKind::kPending) {
      pending_.erase(last.id);
      for (auto it = expiries_.begin(); it != expiries_.end(); ++it) {
        if (it->second == last.id) {
          expiries_.erase(it);
          break;
        }
      }
    }
    log_.pop_back();
    requests_.pop_back();
  }
  assert(log_.size() == undo.log_size && transfer_index_.size() == log_.size());
}

std::vector<Status> Ledger::create_transfers(std::span<const Transfer> transfers, TimeMs now_ms) {
  std::vector<Status> results(transfers.size());
  size_t i = 0;
  while (i < transfers.size()) {
    size_t end = i;  // The chain is [i, end].
    while (end < transfers.size() && transfers[end].linked) ++end;
    if (end == transfers.size()) {
      for (size_t k = i; k < end; ++k) {
        results[k] = fail(ErrorCode::kInvalidArgument,
                          "a linked chain must end with a transfer that is not linked");
      }
      break;
    }
    if (end == i) {
      results[i] = apply(transfers[i], now_ms, nullptr);
      ++i;
      continue;
    }
    Undo undo{.log_size = log_.size()};
    size_t failed = end + 1;
    for (size_t k = i; k <= end; ++k) {
      results[k] = apply(transfers[k], now_ms, &undo);
      if (!results[k]) {
        failed = k;
        break;
      }
    }
    if (failed <= end) {
      roll_back(undo);
      for (size_t k = i; k <= end; ++k) {
        if (k != failed) {
          results[k] = fail(ErrorCode::kLinkedFailed,
                            fmt::format("linked transfer {} failed", transfers[failed].id));
        }
      }
    }
    i = end + 1;
  }
  return results;
}

Status Ledger::create_transfer(const Transfer& transfer, TimeMs now_ms) {
  if (transfer.linked) {
    return fail(ErrorCode::kInvalidArgument, "a transfer on its own cannot be linked");
  }
  expire(now_ms);
  return apply(transfer, now_ms, nullptr);
}

std::vector<std::string> Ledger::expire(TimeMs now_ms) {
  std::vector<std::string> out;
  while (!expiries_.empty() && expiries_.begin()->first <= now_ms) {
    const std::string id = expiries_.begin()->second;
    expiries_.erase(expiries_.begin());
    auto state = pending_.find(id);
    if (state == pending_.end() || state->second != PendingState::kPending) continue;
    const Transfer& t = log_[transfer_index_.at(id)];
    accounts_.at(t.debit_account_id).debits_pending -= t.amount;
    accounts_.at(t.credit_account_id).credits_pending -= t.amount;
    state->second = PendingState::kExpired;
    out.push_back(id);
  }
  return out;
}

const Account* Ledger::account(const std::string& id) const {
  auto it = accounts_.find(id);
  return it == accounts_.end() ? nullptr : &it->second;
}

const Transfer* Ledger::transfer(const std::string& id) const {
  auto it = transfer_index_.find(id);
  return it == transfer_index_.end() ? nullptr : &log_[it->second];
}

std::optional<PendingState> Ledger::pending_state(const std::string& id) const {
  auto it = pending_.find(id);
  if (it == pending_.end()) return std::nullopt;
  return it->second;
}

Ledger::Sums Ledger::sums() const {
  Sums s;
  for (const auto& [id, a] : accounts_) {
    s.posted += static_cast<Int128>(a.credits_posted) - a.debits_posted;
    s.pending += static_cast<Int128>(a.credits_pending) - a.debits_pending;
  }
  return s;
}

}  // namespace allot::ledger
