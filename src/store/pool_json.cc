#include "store/pool_json.h"

#include "common/document.h"

namespace allot {

using nlohmann::json;

static void to_json(json& doc, PoolProvider provider) { doc = pool_provider_name(provider); }
static void from_json(const json& doc, PoolProvider& provider) {
  read_name(doc, provider, parse_pool_provider);
}
static void to_json(json& doc, PoolNodeState state) { doc = pool_node_state_name(state); }
static void from_json(const json& doc, PoolNodeState& state) {
  read_name(doc, state, parse_pool_node_state);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Pool, id, name, gpu_model, region, min_nodes, max_nodes,
                                   provider, gpus_per_node, cpu_milli, memory_mib, create_command,
                                   delete_command, boot_timeout_ms, idle_timeout_ms, cooldown_ms,
                                   created_at_ms, deleted_at_ms, last_scale_up_ms,
                                   last_scale_down_ms, boot_failures, delete_failures)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PoolNode, id, pool_id, name, join_token_id, state, node_id,
                                   provider_ref, reason, requested_at_ms, joined_at_ms,
                                   retired_at_ms, delete_tried_at_ms, delete_attempts, ended_at_ms)

json pool_document(const Pool& p) { return p; }
json pool_node_document(const PoolNode& n) { return n; }

Result<Pool> pool_from_document(const json& d) { return from_document<Pool>(d, "pool"); }
Result<PoolNode> pool_node_from_document(const json& d) {
  return from_document<PoolNode>(d, "pool node");
}

}  // namespace allot
