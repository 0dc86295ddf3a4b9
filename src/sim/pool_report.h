// The report's node pool figures: per pool what the autoscaler did and what its nodes' GPUs were
// used for, and how long instances waited in the queue.
#pragma once

#include <nlohmann/json.hpp>

#include "core/kernel/state.h"

namespace allot::sim {

// Per pool, by name: nodes launched, retired, boot failures, nodes at the end, node-hours (from
// the request to the machine's deletion, what a cloud bills), GPU-hours available (from each
// node's join to its deletion), GPU-hours allocated to instances on its nodes, GPU idle hours
// (available less allocated) and the queue wait of the instances that ran on it.
nlohmann::json pool_report(const State& state, TimeMs end_ms);

// Seconds from creation to start of every instance that started: count, mean, p50, p95 and max;
// and how many never started.
nlohmann::json queue_wait(const State& state);

}  // namespace allot::sim
