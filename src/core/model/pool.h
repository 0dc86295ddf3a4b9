// Node pools: groups of like nodes that the autoscaler grows and shrinks through a provider, and
// the nodes it has asked a provider for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace allot {

// Who makes a pool's nodes. `static`: nodes join on their own and the autoscaler only watches;
// `command`: the operator's scripts create and delete a node; `local`: allotd starts and stops
// allot-agent processes with simulated GPUs on its own machine.
enum class PoolProvider { kStatic, kCommand, kLocal };

std::string_view pool_provider_name(PoolProvider provider);
std::optional<PoolProvider> parse_pool_provider(std::string_view name);

struct Pool {
  std::string id;  // "pol_" + 16 hex
  std::string name;
  std::string gpu_model;  // A catalog model: every node of the pool has it.
  std::string region;
  int min_nodes = 0;
  int max_nodes = 0;
  PoolProvider provider = PoolProvider::kStatic;
  // The shape of the nodes the provider makes.
  int gpus_per_node = 8;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  // The command provider's scripts, run with `/bin/sh -c`.
  std::string create_command;
  std::string delete_command;
  int64_t boot_timeout_ms = 300'000;  // A node that has not joined by then failed to boot.
  int64_t idle_timeout_ms = 600'000;  // A node without work this long is taken away.
  int64_t cooldown_ms = 60'000;       // Between two scale-ups of the pool.
  TimeMs created_at_ms = 0;
  TimeMs deleted_at_ms = 0;
  TimeMs last_scale_up_ms = 0;
  TimeMs last_scale_down_ms = 0;
  int64_t boot_failures = 0;
  int64_t delete_failures = 0;

  bool operator==(const Pool&) const = default;
  bool deleted() const { return deleted_at_ms != 0; }
};

// booting -> ready -> deleting -> deleted; booting -> failed (did not join in time, or the
// provider could not make it). A deleting node whose deletion failed stays deleting and is tried
// again.
enum class PoolNodeState { kBooting, kReady, kDeleting, kDeleted, kFailed };

std::string_view pool_node_state_name(PoolNodeState state);
std::optional<PoolNodeState> parse_pool_node_state(std::string_view name);

// A node the autoscaler asked a provider for.
struct PoolNode {
  std::string id;  // "pnd_" + 16 hex
  std::string pool_id;
  std::string name;           // The node name it joins with.
  std::string join_token_id;  // Its own join token, good until the boot timeout.
  PoolNodeState state = PoolNodeState::kBooting;
  std::string node_id;       // Once joined.
  std::string provider_ref;  // What the provider called it.
  std::string reason;        // Why it was made, taken away or failed.
  TimeMs requested_at_ms = 0;
  TimeMs joined_at_ms = 0;
  TimeMs retired_at_ms = 0;       // Entered deleting.
  TimeMs delete_tried_at_ms = 0;  // The last deletion that failed.
  int64_t delete_attempts = 0;
  TimeMs ended_at_ms = 0;

  bool operator==(const PoolNode&) const = default;
  // Counts towards the pool's size: booting, ready or being deleted.
  bool live() const {
    return state == PoolNodeState::kBooting || state == PoolNodeState::kReady ||
           state == PoolNodeState::kDeleting;
  }
};

}  // namespace allot
