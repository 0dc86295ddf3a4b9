// The pools domain's commands: node pools, the nodes the autoscaler asks providers for, and the
// spot price rules.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/type_list.h"
#include "core/model/pool.h"
#include "core/model/spot_rule.h"

namespace allot {

// Node pools (core/pools/pools.cc).
struct CreatePool {
  Pool pool;  // Its settings; the core sets the times and counters.
};

// Changes the settings that are set.
struct UpdatePool {
  std::string id;
  std::optional<int> min_nodes;
  std::optional<int> max_nodes;
  std::optional<int64_t> boot_timeout_ms;
  std::optional<int64_t> idle_timeout_ms;
  std::optional<int64_t> cooldown_ms;
};

// Only a pool with no live nodes: scale it to zero first.
struct DeletePool {
  std::string id;
};

struct PoolLaunch {
  std::string pool_node_id;
  std::string name;
  std::string join_token_id;
  std::string token_hash;
};

// The autoscaler asks for new nodes: each gets its own join token, good until the boot timeout.
struct ScaleUpPool {
  std::string pool_id;
  std::vector<PoolLaunch> launches;
  std::string reason;
};

// The autoscaler takes a node away: refused unless the node runs nothing; its node is cordoned in
// the same step, so no work can land on it after the check.
struct RetirePoolNode {
  std::string id;
  std::string reason;
};

enum class PoolNodeOutcome { kCreated, kCreateFailed, kBootTimedOut, kDeleted, kDeleteFailed };

// What a provider answered, or a boot that took too long.
struct RecordPoolNode {
  std::string id;
  PoolNodeOutcome outcome = PoolNodeOutcome::kCreated;
  std::string detail;        // The error, or the reason.
  std::string provider_ref;  // kCreated: what the provider called the node.
};

// Sets (or replaces) the spot price rule of its model and region.
struct SetSpotRule {
  SpotRule rule;
};

struct DeleteSpotRule {
  std::string model;
  std::string region;
};

using PoolsCommands = TypeList<CreatePool, UpdatePool, DeletePool, ScaleUpPool, RetirePoolNode,
                               RecordPoolNode, SetSpotRule, DeleteSpotRule>;
using PoolsRows = TypeList<Pool, PoolNode, SpotRule>;

}  // namespace allot
