// The node pool commands' logic, used by Core::apply, and the join hook that makes a node that
// joins with a pool node's token a member of that pool.
#pragma once

#include "core/kernel/handler.h"

namespace allot {

// - CreatePool: adds the pool, its times and counters reset. Refuses invalid_id, already_exists (a
//   taken id or a live pool's name), limit_exceeded (too many pools, max_nodes or a command too
//   large), and invalid_argument (a bad name, region, GPU model, size, timer or provider command).
// - UpdatePool: changes the sizes and timers that are set; no rows where nothing changes. Refuses
//   not_found (no live pool), invalid_argument (bad sizes or timers), limit_exceeded (max_nodes too
//   large).
// - DeletePool: marks the pool deleted now. Refuses not_found (no live pool), and conflict while it
//   has live nodes: set max_nodes to 0 and wait.
// - ScaleUpPool: per launch, adds a join token good until the boot timeout, a booting pool node and
//   an event; stamps the pool's scale-up. Refuses not_found, conflict (past max_nodes),
//   invalid_argument (a static pool, no launches, a bad name or hash), invalid_id, already_exists
//   (a reused id or name).
// - RetirePoolNode: sets the ready pool node deleting, cordons its node and stamps the pool's
//   scale-down, with an event. Refuses not_found, and conflict where the pool node is not ready or
//   its node runs work.
// - RecordPoolNode: records the provider's answer: a created node's ref; or, with an event, a
//   failed boot (token revoked) or delete, counted on the pool, or a deletion (its node leaves the
//   fleet). No rows for a failed boot unless booting, a delete outcome unless deleting. Refuses
//   not_found only.
ALLOT_HANDLERS(CreatePool, UpdatePool, DeletePool, ScaleUpPool, RetirePoolNode, RecordPoolNode);

// When `token` was made for a booting pool node: the new node takes the pool's region and a
// `pool` label, the pool node is ready, and the token is spent. Adds the changed rows to `draft`.
void join_pool(Draft& draft, const JoinToken& token, Node& node, TimeMs now_ms);

// The live nodes of a pool (booting, ready or being deleted).
int live_pool_nodes(const State& state, const std::string& pool_id);

void put(State& state, const Pool& pool);
void put(State& state, const PoolNode& node);

}  // namespace allot
