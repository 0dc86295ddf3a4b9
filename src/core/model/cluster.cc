#include "core/model/cluster.h"

#include <array>

namespace allot {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> parse_by_name(std::string_view name, const std::array<Enum, N>& values,
                                  std::string_view (*name_of)(Enum)) {
  for (Enum value : values) {
    if (name_of(value) == name) return value;
  }
  return std::nullopt;
}

template <typename Enum, Enum kLast>
std::array<std::string_view, static_cast<size_t>(kLast) + 1> names_of(
    std::string_view (*name_of)(Enum)) {
  std::array<std::string_view, static_cast<size_t>(kLast) + 1> names;
  for (size_t i = 0; i < names.size(); ++i) names[i] = name_of(static_cast<Enum>(i));
  return names;
}

}  // namespace

std::span<const std::string_view> node_state_names() {
  static const auto kNames = names_of<NodeState, NodeState::kDeleted>(node_state_name);
  return kNames;
}

std::span<const std::string_view> instance_state_names() {
  static const auto kNames = names_of<InstanceState, InstanceState::kLost>(instance_state_name);
  return kNames;
}

std::string_view node_state_name(NodeState state) {
  switch (state) {
    case NodeState::kRegistering:
      return "registering";
    case NodeState::kReady:
      return "ready";
    case NodeState::kCordoned:
      return "cordoned";
    case NodeState::kDraining:
      return "draining";
    case NodeState::kUnhealthy:
      return "unhealthy";
    case NodeState::kLost:
      return "lost";
    case NodeState::kDeleted:
      return "deleted";
  }
  return "lost";
}

std::string_view node_admin_name(NodeAdmin admin) {
  switch (admin) {
    case NodeAdmin::kNone:
      return "none";
    case NodeAdmin::kCordoned:
      return "cordoned";
    case NodeAdmin::kDraining:
      return "draining";
  }
  return "none";
}

std::optional<NodeAdmin> parse_node_admin(std::string_view name) {
  return parse_by_name(name,
                       std::array{NodeAdmin::kNone, NodeAdmin::kCordoned, NodeAdmin::kDraining},
                       node_admin_name);
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
  switch (state) {
    case InstanceState::kQueued:
      return "queued";
    case InstanceState::kScheduled:
      return "scheduled";
    case InstanceState::kStarting:
      return "starting";
    case InstanceState::kRunning:
      return "running";
    case InstanceState::kSucceeded:
      return "succeeded";
    case InstanceState::kFailed:
      return "failed";
    case InstanceState::kStopped:
      return "stopped";
    case InstanceState::kPreempted:
      return "preempted";
    case InstanceState::kLost:
      return "lost";
  }
  return "lost";
}

bool is_final(InstanceState state) {
  return state == InstanceState::kSucceeded || state == InstanceState::kFailed ||
         state == InstanceState::kStopped || state == InstanceState::kPreempted ||
         state == InstanceState::kLost;
}

EnergyUse Instance::energy_between(TimeMs from_ms, TimeMs to_ms) const {
  EnergyUse sum;
  for (auto it = energy.lower_bound(from_ms); it != energy.end() && it->first < to_ms; ++it) {
    sum.energy_mj += it->second.energy_mj;
    sum.carbon_ug += it->second.carbon_ug;
  }
  return sum;
}

std::string_view prefer_name(Prefer prefer) {
  switch (prefer) {
    case Prefer::kNone:
      return "";
    case Prefer::kPrice:
      return "price";
    case Prefer::kCarbon:
      return "carbon";
    case Prefer::kLatency:
      return "latency";
  }
  return "";
}

std::optional<Prefer> parse_prefer(std::string_view name) {
  static constexpr std::array kPrefers = {Prefer::kPrice, Prefer::kCarbon, Prefer::kLatency};
  return parse_by_name(name, kPrefers, prefer_name);
}

}  // namespace allot
