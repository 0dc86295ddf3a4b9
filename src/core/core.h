// The deterministic core: all state that matters, changed only by applying commands one at a time.
// It reads no clock, does no I/O and draws no random numbers, so the daemon and the simulator drive
// the same code and any run replays exactly.
#pragma once

#include <span>
#include <vector>

#include "common/error.h"
#include "core/command.h"
#include "core/state.h"

namespace allot {

class Core {
 public:
  // Applies one command at time `now_ms`. On success returns the objects it changed, in the order
  // they should be written; on rejection returns the error and leaves the state untouched.
  [[nodiscard]] Result<std::vector<Row>> apply(const Command& command, TimeMs now_ms);

  // Puts objects loaded from the store back in place, as they were written.
  void restore(std::span<const Row> rows);

  const State& state() const { return state_; }

 private:
  State state_;
};

}  // namespace allot
