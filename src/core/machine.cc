// The state machine: each command goes to its domain's handler, its money to the ledger, its rows
// into the state, and then the invariants are checked.
#include "core/core.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/admission/admission.h"
#include "core/books/books.h"
#include "core/cluster/cluster.h"
#include "core/cluster/idle.h"
#include "core/cluster/image_pulls.h"
#include "core/cluster/registries.h"
#include "core/cluster/services.h"
#include "core/cluster/volumes.h"
#include "core/identity/identity.h"
#include "core/money/budgets.h"
#include "core/money/invoices.h"
#include "core/money/money.h"
#include "core/money/service_use.h"
#include "core/pools/pools.h"
#include "core/pools/spot_rules.h"
#include "core/regions/regions.h"
#include "core/tick.h"

namespace allot {
namespace {

// Applies a command's money to the ledger: its new accounts, then its transfers as one linked
// chain, all or none. On success each transfer's row gets its place in the journal and the
// transfer as the ledger recorded it; on failure the ledger is as it was.
Status apply_money(ledger::Ledger& ledger, Rows& rows, TimeMs now_ms) {
  std::vector<std::string> created;
  std::vector<ledger::Transfer> chain;
  auto undo = [&] {
    for (const std::string& id : created) ledger.remove_empty_account(id);
  };
  for (Row& row : rows) {
    if (auto* account = std::get_if<ledger::Account>(&row)) {
      if (ledger.account(account->id) == nullptr) created.push_back(account->id);
      if (auto ok = ledger.create_account(*account, now_ms); !ok) {
        undo();
        return ok;
      }
      account->created_at_ms = now_ms;
    } else if (const auto* entry = std::get_if<LedgerEntry>(&row)) {
      chain.push_back(entry->transfer);
    }
  }
  if (chain.empty()) return {};
  for (size_t i = 0; i + 1 < chain.size(); ++i) chain[i].linked = true;
  const size_t first = ledger.requests().size();
  const std::vector<Status> results = ledger.create_transfers(chain, now_ms);
  for (size_t i = 0; i < results.size(); ++i) {
    // The chain fails as one; the transfer that failed says why, the others name it.
    if (!results[i] && results[i].error().code != ErrorCode::kLinkedFailed) {
      undo();
      return std::unexpected(Error{results[i].error().code,
                                   fmt::format("{}: {}", chain[i].id, results[i].error().message)});
    }
  }
  assert(ledger.requests().size() == first + chain.size());
  size_t next = first;
  for (Row& row : rows) {
    if (auto* entry = std::get_if<LedgerEntry>(&row)) {
      entry->seq = static_cast<int64_t>(next);
      entry->transfer = ledger.requests()[next++];
    }
  }
  return {};
}

// Hands a command to its domain's handler: one `apply` overload per command type.
Result<Rows> dispatch(const State& state, const Command& command, TimeMs now_ms,
                      const Placing& placing) {
  return std::visit([&](const auto& c) { return apply(state, c, now_ms, placing); }, command);
}

void put_row(State& state, const Row& row) {
  std::visit([&state](const auto& object) { put(state, object); }, row);
}

}  // namespace

void State::put(const Row& row) { put_row(*this, row); }

Result<std::vector<Row>> Core::apply(const Command& command, TimeMs now_ms) {
  Result<Rows> rows = dispatch(state_, command, now_ms, Placing{*scheduler_, options_});
  if (!rows) return rows;
  if (auto ok = apply_money(state_.ledger, *rows, now_ms); !ok) return std::unexpected(ok.error());
  const int64_t last_event_seq = state_.last_event_seq;
  restore(*rows);
  if (options_.check_invariants != InvariantCheck::kOff) check(last_event_seq, *rows);
  return rows;
}

void Core::check(int64_t last_event_seq, std::span<const Row> rows) {
  ++checks_;
  std::vector<kernel::Violation> found = kernel::check_command(last_event_seq, rows);
  // The whole state's check reads every node and instance. Up to kCheckEveryCommandObjects of
  // them it runs after every command; beyond, after every n-th so that its cost per command stays
  // that of a state of that size (a large simulation would otherwise spend its time checking).
  const size_t objects = state_.nodes.size() + state_.instances.size();
  if (++commands_unchecked_ * kCheckEveryCommandObjects >= objects) {
    commands_unchecked_ = 0;
    std::vector<kernel::Violation> of_state = kernel::check_state(state_);
    found.insert(found.end(), of_state.begin(), of_state.end());
  }
  if (found.empty()) return;
  if (options_.check_invariants == InvariantCheck::kAbort) {
    std::fputs(("invariant violated after a command:\n" + kernel::describe(found)).c_str(), stderr);
    std::abort();
  }
  for (kernel::Violation& v : found) {
    if (std::ranges::find(violations_, v) == violations_.end()) violations_.push_back(std::move(v));
  }
}

Status Core::restore_ledger(ledger::Ledger ledger) {
  const auto sums = ledger.sums();
  if (sums.posted != 0 || sums.pending != 0) {
    return fail(ErrorCode::kInternal, "the ledger does not sum to zero");
  }
  state_.ledger = std::move(ledger);
  return {};
}

void Core::restore(std::span<const Row> rows) {
  for (const Row& row : rows) state_.put(row);
}

}  // namespace allot
