// The node pool commands' logic, used by Core::apply, and the join hook that makes a node that
// joins with a pool node's token a member of that pool.
#pragma once

#include "core/cluster_ops.h"

namespace allot {

[[nodiscard]] Result<Rows> create_pool(const State& state, const CreatePool& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> update_pool(const State& state, const UpdatePool& c);
[[nodiscard]] Result<Rows> delete_pool(const State& state, const DeletePool& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> scale_up_pool(const State& state, const ScaleUpPool& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> retire_pool_node(const State& state, const RetirePoolNode& c,
                                            TimeMs now_ms);
[[nodiscard]] Result<Rows> record_pool_node(const State& state, const RecordPoolNode& c,
                                            TimeMs now_ms);

// When `token` was made for a booting pool node: the new node takes the pool's region and a
// `pool` label, the pool node is ready, and the token is spent. Adds the changed rows to `draft`.
void join_pool(Draft& draft, const JoinToken& token, Node& node, TimeMs now_ms);

// The live nodes of a pool (booting, ready or being deleted).
int live_pool_nodes(const State& state, const std::string& pool_id);

}  // namespace allot
