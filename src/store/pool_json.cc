#include "store/pool_json.h"

namespace allot {

using nlohmann::json;

json pool_document(const Pool& p) {
  return {{"id", p.id},
          {"name", p.name},
          {"gpu_model", p.gpu_model},
          {"region", p.region},
          {"min_nodes", p.min_nodes},
          {"max_nodes", p.max_nodes},
          {"provider", pool_provider_name(p.provider)},
          {"gpus_per_node", p.gpus_per_node},
          {"cpu_milli", p.cpu_milli},
          {"memory_mib", p.memory_mib},
          {"create_command", p.create_command},
          {"delete_command", p.delete_command},
          {"boot_timeout_ms", p.boot_timeout_ms},
          {"idle_timeout_ms", p.idle_timeout_ms},
          {"cooldown_ms", p.cooldown_ms},
          {"created_at_ms", p.created_at_ms},
          {"deleted_at_ms", p.deleted_at_ms},
          {"last_scale_up_ms", p.last_scale_up_ms},
          {"last_scale_down_ms", p.last_scale_down_ms},
          {"boot_failures", p.boot_failures},
          {"delete_failures", p.delete_failures}};
}

json pool_node_document(const PoolNode& n) {
  return {{"id", n.id},
          {"pool_id", n.pool_id},
          {"name", n.name},
          {"join_token_id", n.join_token_id},
          {"state", pool_node_state_name(n.state)},
          {"node_id", n.node_id},
          {"provider_ref", n.provider_ref},
          {"reason", n.reason},
          {"requested_at_ms", n.requested_at_ms},
          {"joined_at_ms", n.joined_at_ms},
          {"retired_at_ms", n.retired_at_ms},
          {"delete_tried_at_ms", n.delete_tried_at_ms},
          {"delete_attempts", n.delete_attempts},
          {"ended_at_ms", n.ended_at_ms}};
}

Result<Pool> pool_from_document(const json& d) {
  try {
    auto provider = parse_pool_provider(d.at("provider").get<std::string>());
    if (!provider) return fail(ErrorCode::kInternal, "a stored pool has an unknown provider");
    return Pool{.id = d.at("id"),
                .name = d.at("name"),
                .gpu_model = d.at("gpu_model"),
                .region = d.at("region"),
                .min_nodes = d.at("min_nodes"),
                .max_nodes = d.at("max_nodes"),
                .provider = *provider,
                .gpus_per_node = d.at("gpus_per_node"),
                .cpu_milli = d.at("cpu_milli"),
                .memory_mib = d.at("memory_mib"),
                .create_command = d.at("create_command"),
                .delete_command = d.at("delete_command"),
                .boot_timeout_ms = d.at("boot_timeout_ms"),
                .idle_timeout_ms = d.at("idle_timeout_ms"),
                .cooldown_ms = d.at("cooldown_ms"),
                .created_at_ms = d.at("created_at_ms"),
                .deleted_at_ms = d.at("deleted_at_ms"),
                .last_scale_up_ms = d.at("last_scale_up_ms"),
                .last_scale_down_ms = d.at("last_scale_down_ms"),
                .boot_failures = d.at("boot_failures"),
                .delete_failures = d.at("delete_failures")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored pool is malformed: ") + e.what());
  }
}

Result<PoolNode> pool_node_from_document(const json& d) {
  try {
    auto state = parse_pool_node_state(d.at("state").get<std::string>());
    if (!state) return fail(ErrorCode::kInternal, "a stored pool node has an unknown state");
    return PoolNode{.id = d.at("id"),
                    .pool_id = d.at("pool_id"),
                    .name = d.at("name"),
                    .join_token_id = d.at("join_token_id"),
                    .state = *state,
                    .node_id = d.at("node_id"),
                    .provider_ref = d.at("provider_ref"),
                    .reason = d.at("reason"),
                    .requested_at_ms = d.at("requested_at_ms"),
                    .joined_at_ms = d.at("joined_at_ms"),
                    .retired_at_ms = d.at("retired_at_ms"),
                    .delete_tried_at_ms = d.at("delete_tried_at_ms"),
                    .delete_attempts = d.at("delete_attempts"),
                    .ended_at_ms = d.at("ended_at_ms")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored pool node is malformed: ") + e.what());
  }
}

}  // namespace allot
