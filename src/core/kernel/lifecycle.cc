#include "core/kernel/lifecycle.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace allot {

void transition(Instance& instance, InstanceState to, TimeMs at_ms, std::string message) {
  instance.state = to;
  instance.reason = message;
  if (to == InstanceState::kRunning) instance.started_at_ms = at_ms;
  if (is_final(to)) instance.ended_at_ms = at_ms;
  instance.events.push_back(
      InstanceEvent{at_ms, std::string(instance_state_name(to)), std::move(message)});
}

void end_instance(Draft& draft, const std::string& id, InstanceState to, TimeMs at_ms,
                  std::string message) {
  Instance& instance = draft.edit_instance(id);
  if (is_final(instance.state)) return;
  const bool held = instance.state != InstanceState::kQueued && !instance.node_id.empty();
  transition(instance, to, at_ms, std::move(message));
  const std::string gang_id = instance.gang_id;
  if (held) {
    Node& node = draft.edit_node(instance.node_id);
    for (int index : instance.gpu_indices) {
      node.gpus.at(static_cast<size_t>(index)).used_milli -= instance.milli_per_gpu();
    }
    node.used_cpu_milli -= instance.spec.cpu_milli;
    node.used_memory_mib -= instance.spec.memory_mib;
    ++node.generation;
  }
  // A gang lives and dies together: a member that ends other than by succeeding ends the rest.
  if (gang_id.empty() || to == InstanceState::kSucceeded) return;
  for (const std::string& other : gang_members(draft, gang_id)) {
    if (other != id) {
      stop_member(draft, other, at_ms,
                  fmt::format("gang member {} ended ({})", id, instance_state_name(to)));
    }
  }
}

void stop_member(Draft& draft, const std::string& id, TimeMs at_ms, const std::string& message) {
  const Instance& instance = *draft.instance(id);
  if (is_final(instance.state) || instance.stop_requested) return;
  if (instance.state == InstanceState::kQueued || instance.state == InstanceState::kScheduled) {
    // Nothing runs yet: it ends now, and none of its time is billed.
    end_instance(draft, id, InstanceState::kStopped, at_ms, message + " before it started");
    return;
  }
  Instance& stopping = draft.edit_instance(id);
  stopping.stop_requested = true;
  stopping.stop_reason = message;
  stopping.events.push_back(InstanceEvent{at_ms, "", message});
  ++draft.edit_node(stopping.node_id).generation;
}

void remove_node(Draft& draft, const std::string& node_id, TimeMs now_ms) {
  const Node& node = *draft.node(node_id);
  const TimeMs last = node.last_heartbeat_ms != 0 ? node.last_heartbeat_ms : node.joined_at_ms;
  for (const std::string& instance_id : draft.instances_on(node_id)) {
    end_instance(draft, instance_id, InstanceState::kLost, last,
                 fmt::format("node {} was deleted", node.name));
  }
  Node& gone = draft.edit_node(node_id);
  gone.deleted_at_ms = now_ms;
  gone.lost = true;  // Not heard from any more: whatever counts nodes in service leaves it out.
  gone.credential_hash.clear();
  gone.admin = NodeAdmin::kCordoned;
}

std::vector<std::string> gang_members(const Draft& draft, const std::string& gang_id) {
  std::vector<std::pair<int, std::string>> ranked;
  draft.for_each_instance([&](const Instance& instance) {
    if (instance.gang_id == gang_id) ranked.emplace_back(instance.gang_rank, instance.id);
  });
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  out.reserve(ranked.size());
  for (auto& [rank, id] : ranked) out.push_back(std::move(id));
  return out;
}

}  // namespace allot
