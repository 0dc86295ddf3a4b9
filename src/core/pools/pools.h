// The node pool commands' logic, used by Core::apply, and the join hook that makes a node that
// joins with a pool node's token a member of that pool.
#pragma once

#include "core/kernel/handler.h"

namespace allot {

[[nodiscard]] Handler<CreatePool> apply;
[[nodiscard]] Handler<UpdatePool> apply;
[[nodiscard]] Handler<DeletePool> apply;
[[nodiscard]] Handler<ScaleUpPool> apply;
[[nodiscard]] Handler<RetirePoolNode> apply;
[[nodiscard]] Handler<RecordPoolNode> apply;

// When `token` was made for a booting pool node: the new node takes the pool's region and a
// `pool` label, the pool node is ready, and the token is spent. Adds the changed rows to `draft`.
void join_pool(Draft& draft, const JoinToken& token, Node& node, TimeMs now_ms);

// The live nodes of a pool (booting, ready or being deleted).
int live_pool_nodes(const State& state, const std::string& pool_id);

void put(State& state, const Pool& pool);
void put(State& state, const PoolNode& node);

}  // namespace allot
