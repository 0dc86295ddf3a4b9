// The autoscaler's decisions, as a pure function of the state and the time: which pools grow and
// why, which booting nodes took too long, which idle nodes go, which deletions to try again. The
// daemon turns them into commands and provider calls; the simulator can call it the same way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/kernel/state.h"

namespace allot {

struct ScaleDecision {
  enum class Kind {
    kLaunch,       // `count` new nodes for the pool.
    kBootTimeout,  // The pool node did not join in time.
    kRetire,       // The pool node has been idle too long.
    kDelete,       // Try again to delete a pool node whose deletion failed.
  };
  Kind kind = Kind::kLaunch;
  std::string pool_id;
  std::string pool_node_id;
  int count = 0;
  std::string reason;
};

struct ScaleOptions {
  // A deletion that failed is tried again after this long.
  int64_t delete_retry_ms = 30'000;
  // The nodes each pool should have for the demand the forecast expects soon, by pool id: the
  // pool grows to that many ahead of demand (within its maximum and cool-down) and keeps that
  // many when they are idle.
  std::map<std::string, int> forecast_nodes;
};

std::vector<ScaleDecision> plan_scaling(const State& state, TimeMs now_ms,
                                        const ScaleOptions& options);

// True when the queued instance waits for room (not for money, a quota or a budget).
bool waits_for_room(const Instance& instance);

}  // namespace allot
