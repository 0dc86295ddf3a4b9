#include "core/model/cluster.h"

#include "common/enum_names.h"

namespace allot {

constexpr EnumNames<NodeState, 7> kNodeStateNames{
    {"registering", "ready", "cordoned", "draining", "unhealthy", "lost", "deleted"}};
constexpr EnumNames<NodeAdmin, 3> kNodeAdminNames{{"none", "cordoned", "draining"}};
constexpr EnumNames<InstanceState, 9> kInstanceStateNames{{"queued", "scheduled", "starting",
                                                           "running", "succeeded", "failed",
                                                           "stopped", "preempted", "lost"}};
// kNone's name is empty: no preference, which no request spells out.
constexpr EnumNames<Prefer, 4> kPreferNames{{"", "price", "carbon", "latency"}};

std::span<const std::string_view> node_state_names() { return kNodeStateNames.names; }

std::span<const std::string_view> instance_state_names() { return kInstanceStateNames.names; }

std::string_view node_state_name(NodeState state) { return kNodeStateNames.name(state, "lost"); }

std::string_view node_admin_name(NodeAdmin admin) { return kNodeAdminNames.name(admin, "none"); }

std::optional<NodeAdmin> parse_node_admin(std::string_view name) {
  return kNodeAdminNames.parse(name);
}

NodeState Node::state() const {
  if (deleted_at_ms != 0) return NodeState::kDeleted;
  if (lost) return NodeState::kLost;
  if (last_heartbeat_ms == 0) return NodeState::kRegistering;
  if (admin == NodeAdmin::kDraining) return NodeState::kDraining;
  if (admin == NodeAdmin::kCordoned) return NodeState::kCordoned;
  for (const Gpu& gpu : gpus) {
    if (!gpu.healthy) return NodeState::kUnhealthy;
  }
  return NodeState::kReady;
}

std::string_view instance_state_name(InstanceState state) {
  return kInstanceStateNames.name(state, "lost");
}

bool is_final(InstanceState state) {
  return state == InstanceState::kSucceeded || state == InstanceState::kFailed ||
         state == InstanceState::kStopped || state == InstanceState::kPreempted ||
         state == InstanceState::kLost;
}

bool only_readings_differ(const Node& before, const Node& after) {
  if (before.gpus.size() != after.gpus.size()) return false;
  Node same = after;
  same.last_heartbeat_ms = before.last_heartbeat_ms;
  for (size_t i = 0; i < same.gpus.size(); ++i) same.gpus[i].telemetry = before.gpus[i].telemetry;
  return same == before;
}

bool only_readings_differ(const Instance& before, const Instance& after) {
  Instance same = after;
  same.energy = before.energy;
  return same == before;
}

EnergyUse Instance::energy_between(TimeMs from_ms, TimeMs to_ms) const {
  EnergyUse sum;
  for (auto it = energy.lower_bound(from_ms); it != energy.end() && it->first < to_ms; ++it) {
    sum.energy_mj += it->second.energy_mj;
    sum.carbon_ug += it->second.carbon_ug;
  }
  return sum;
}

std::string_view prefer_name(Prefer prefer) { return kPreferNames.name(prefer, ""); }

std::optional<Prefer> parse_prefer(std::string_view name) { return kPreferNames.parse(name); }

}  // namespace allot
