// Metering: the GPU time an instance is billed for, read from its lifecycle. Billing runs from the
// moment it entered running to the moment it ended (stopped, exited, preempted: the moment it was
// chosen; lost: its node's last heartbeat), in whole seconds; queued, scheduled and starting time
// is free, and an instance that never ran is billed nothing.
#pragma once

#include <optional>

#include "core/kernel/state.h"

namespace allot {

struct Usage {
  meter::PriceKey key;  // The GPU model it ran on, its node's region, its price class.
  int64_t milli = 0;    // GPU milli held: 1000 per whole GPU.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t start_s = 0;  // Whole seconds since the epoch: [start_s, end_s).
  int64_t end_s = 0;
};

// The instance's usage up to `now_ms` (its end, once it has ended), or nullopt if it never ran.
std::optional<Usage> usage_of(const State& state, const Instance& instance, TimeMs now_ms);

// What that usage costs under the state's price catalog (seconds without a price are free).
[[nodiscard]] Result<int64_t> charge_of(const State& state, const Usage& usage);

// What that usage costs within [from_s, to_s): its charge up to to_s less its charge up to from_s,
// each stretch rated from its own start. Charges over adjoining windows (calendar months, rating
// intervals) therefore add up exactly to the whole.
[[nodiscard]] Result<int64_t> charge_between(const State& state, const Usage& usage, int64_t from_s,
                                             int64_t to_s);

}  // namespace allot
