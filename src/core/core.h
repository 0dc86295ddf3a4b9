// The deterministic core: all state that matters, changed only by applying commands one at a time.
// It reads no clock, does no I/O and draws no random numbers, so the daemon and the simulator drive
// the same code and any run replays exactly.
#pragma once

#include <span>
#include <vector>

#include "common/error.h"
#include "core/cluster/cluster.h"
#include "core/kernel/command.h"
#include "core/kernel/invariants.h"
#include "core/kernel/state.h"

namespace allot {

class Core {
 public:
  // `scheduler` must outlive the core; null means the built-in first-fit.
  explicit Core(CoreOptions options = {}, const Scheduler* scheduler = nullptr)
      : options_(options), scheduler_(scheduler != nullptr ? scheduler : &first_fit_scheduler()) {
    state_.prices.set_spot_falls_back(options_.spot_falls_back);
    state_.process_nodes_for_all = options_.process_nodes_for_all;
  }

  // Applies one command at time `now_ms`. On success returns the objects it changed, in the order
  // they should be written; on rejection returns the error and leaves the state untouched.
  [[nodiscard]] Result<std::vector<Row>> apply(const Command& command, TimeMs now_ms);

  // Puts objects loaded from the store back in place, as they were written.
  void restore(std::span<const Row> rows);
  // Puts the ledger loaded from the store in place; refused (kInternal) unless it sums to zero.
  [[nodiscard]] Status restore_ledger(ledger::Ledger ledger);

  const State& state() const { return state_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  const CoreOptions& options() const { return options_; }

  // Invariant checks run and what they found (CoreOptions::check_invariants is kCount): each
  // violation is kept once. The whole state is checked after every command while it holds up to
  // 1,000 nodes and instances, and after every n-th command beyond (n: its size over 1,000).
  int64_t checks() const { return checks_; }
  const std::vector<kernel::Violation>& violations() const { return violations_; }

  // The controller serves again from `now_ms` after being away (a start or a reload from the
  // store): every node gets a whole heartbeat timeout from now before it is lost, since its
  // agent could not report meanwhile. A node that is truly gone is still lost, and its work still
  // ends at its real last heartbeat.
  void resume(TimeMs now_ms) { state_.resumed_at_ms = now_ms; }

  // Forgets everything (before a reload from the store); options and scheduler stay.
  void clear() {
    state_ = State{};
    state_.prices.set_spot_falls_back(options_.spot_falls_back);
    state_.process_nodes_for_all = options_.process_nodes_for_all;
  }

 private:
  // Checks the state after a command that wrote `rows`.
  void check(int64_t last_event_seq, std::span<const Row> rows);

  CoreOptions options_;
  const Scheduler* scheduler_;
  State state_;
  static constexpr size_t kCheckEveryCommandObjects = 1'000;
  int64_t checks_ = 0;
  size_t commands_unchecked_ = 0;  // Commands since the whole state was last checked.
  std::vector<kernel::Violation> violations_;
};

}  // namespace allot
