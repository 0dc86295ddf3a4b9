#include "api/wire/cluster.h"

#include <limits>

#include "api/wire/wire.h"
#include "common/money.h"
#include "reports/invoice_render.h"
#include "store/cluster_json.h"

namespace allot {

nlohmann::json to_json(const Node& n) {
  nlohmann::json out = pick(node_document(n), {"id",
                                               "name",
                                               "address",
                                               "region",
                                               "labels",
                                               "cpu_milli",
                                               "memory_mib",
                                               "used_cpu_milli",
                                               "used_memory_mib",
                                               "backend",
                                               "runtime",
                                               "agent_version",
                                               "admin",
                                               "lost",
                                               "joined_at_ms",
                                               "last_heartbeat_ms",
                                               "deleted_at_ms",
                                               "generation",
                                               "gpus",
                                               "gpu_problem"});
  out["state"] = node_state_name(n.state());
  out["joined_at"] = format_time(n.joined_at_ms);
  out["last_heartbeat_at"] = time_or_null(n.last_heartbeat_ms);
  out["deleted_at"] = time_or_null(n.deleted_at_ms);
  return out;
}

nlohmann::json to_json(const Instance& i) {
  nlohmann::json out =
      pick(instance_document(i), {"id",           "tenant_id",      "project_id",
                                  "user_id",      "spec",           "state",
                                  "reason",       "node_id",        "gpu_indices",
                                  "gpu_uuids",    "stop_requested", "stop_reason",
                                  "exit_code",    "created_at_ms",  "started_at_ms",
                                  "ended_at_ms",  "events",         "gang_id",
                                  "gang_rank",    "gang_port",      "billed_micros",
                                  "billed_to_ms", "postings",       "hold_id",
                                  "hold_micros",  "settled",        "billing_cap_ms",
                                  "energy",       "idle_since_ms",  "idle_notified",
                                  "run"});
  out["created_at"] = format_time(i.created_at_ms);
  out["started_at"] = time_or_null(i.started_at_ms);
  out["ended_at"] = time_or_null(i.ended_at_ms);
  out["idle_since"] = time_or_null(i.idle_since_ms);
  out["billed"] = Money::from_micros(i.billed_micros).to_string();
  const EnergyUse energy = i.energy_between(0, std::numeric_limits<TimeMs>::max());
  out["energy_kwh"] = billing::energy_kwh_text(energy.energy_mj);
  out["carbon_kg"] = billing::carbon_kg_text(energy.carbon_ug);
  for (auto& event : out["events"]) event["at"] = format_time(event["at_ms"].get<TimeMs>());
  return out;
}

nlohmann::json to_json(const IdlePolicy& p) {
  return pick(idle_policy_document(p), {"threshold_pct", "window_s", "action"});
}

}  // namespace allot
