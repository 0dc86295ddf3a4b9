#include "api/wire/pools.h"

#include "api/wire/wire.h"
#include "store/pool_json.h"

namespace allot {

nlohmann::json to_json(const Pool& p) {
  nlohmann::json out = pick(
      pool_document(p), {"id", "name", "gpu_model", "region", "min_nodes", "max_nodes", "provider",
                         "gpus_per_node", "cpu_milli", "memory_mib", "create_command",
                         "delete_command", "boot_failures", "delete_failures"});
  out["boot_timeout_s"] = p.boot_timeout_ms / 1000;
  out["idle_timeout_s"] = p.idle_timeout_ms / 1000;
  out["cooldown_s"] = p.cooldown_ms / 1000;
  out["created_at"] = format_time(p.created_at_ms);
  out["deleted_at"] = time_or_null(p.deleted_at_ms);
  out["last_scale_up"] = time_or_null(p.last_scale_up_ms);
  out["last_scale_down"] = time_or_null(p.last_scale_down_ms);
  return out;
}

nlohmann::json to_json(const PoolNode& n) {
  nlohmann::json out = pick(pool_node_document(n),
                            {"id", "name", "state", "provider_ref", "reason", "delete_attempts"});
  out["node_id"] = n.node_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.node_id);
  out["requested_at"] = format_time(n.requested_at_ms);
  out["joined_at"] = time_or_null(n.joined_at_ms);
  out["retired_at"] = time_or_null(n.retired_at_ms);
  out["ended_at"] = time_or_null(n.ended_at_ms);
  return out;
}

}  // namespace allot
