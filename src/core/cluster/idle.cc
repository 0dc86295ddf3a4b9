// Idle stop: policies, and the heartbeat's and the timer's steps (see idle.h).
#include "core/cluster/idle.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/enum_names.h"
#include "common/limits.h"
#include "core/kernel/lookups.h"

namespace allot {
namespace {

constexpr EnumNames<IdleAction, 2> kIdleActionNames{{"stop", "notify"}};

// Whether every GPU of the instance has a reading in this heartbeat under the threshold. A GPU
// without a reading, lost, or with a reading out of 0..100 is busy as far as idle stop knows.
bool all_under(const Instance& instance, const std::map<int, const GpuHeartbeat*>& readings,
               int threshold_pct) {
  if (instance.gpu_indices.empty()) return false;
  for (int index : instance.gpu_indices) {
    auto it = readings.find(index);
    if (it == readings.end()) return false;
    const GpuHeartbeat& beat = *it->second;
    const int pct = beat.telemetry.utilization_pct;
    if (!beat.utilization_read || beat.lost || pct < 0 || pct > 100 || pct >= threshold_pct) {
      return false;
    }
  }
  return true;
}

// Where the tenant wants its notices: the webhook of the project's budget, else of the tenant's.
const Budget* webhook_budget(const State& state, const Instance& instance) {
  const Budget* tenant_wide = nullptr;
  for (const auto& [id, b] : state.budgets) {
    if (!b.live() || b.tenant_id != instance.tenant_id || b.webhook_url.empty()) continue;
    if (b.project_id == instance.project_id) return &b;
    if (b.project_id.empty()) tenant_wide = &b;
  }
  return tenant_wide;
}

Event idle_event(const State& state, const Instance& instance,
                 const std::vector<std::string>& members, const IdlePolicy& policy, TimeMs now_ms,
                 int64_t seq) {
  nlohmann::json payload = {{"instance_id", instance.id},
                            {"project_id", instance.project_id},
                            {"user_id", instance.user_id},
                            {"action", std::string(idle_action_name(policy.action))},
                            {"threshold_pct", policy.threshold_pct},
                            {"window_s", policy.window_s},
                            {"idle_since_ms", instance.idle_since_ms},
                            {"reason", idle_reason(policy)}};
  if (members.size() > 1) payload["members"] = members;  // A gang, rank 0 first.
  const Budget* hook = webhook_budget(state, instance);
  return Event{.seq = seq,
               .at_ms = now_ms,
               .tenant_id = instance.tenant_id,
               .kind = "instance.idle",
               .payload = payload.dump(),
               .webhook_budget_id = hook != nullptr ? hook->id : "",
               .webhook_url = hook != nullptr ? hook->webhook_url : ""};
}

// The stretch has reached the window: stop the instance (a gang: every member), or tell its owner
// once.
void act(Draft& draft, const std::vector<std::string>& members, const IdlePolicy& policy,
         TimeMs now_ms) {
  const std::string& first = members.front();
  if (policy.action == IdleAction::kNotify) {
    const bool told = std::all_of(members.begin(), members.end(), [&](const std::string& id) {
      return draft.instance(id)->idle_notified;
    });
    if (told) return;
    for (const std::string& id : members) {
      Instance& noted = draft.edit_instance(id);
      noted.idle_notified = true;
      noted.events.push_back(InstanceEvent{now_ms, "", idle_reason(policy) + "; owner notified"});
    }
  } else {
    for (const std::string& id : members) stop_member(draft, id, now_ms, idle_reason(policy));
  }
  const int64_t seq = draft.next_event_seq();
  draft.add_row(idle_event(draft.base(), *draft.instance(first), members, policy, now_ms, seq));
}

// The members that idle stop acts on together once `id`'s stretch has reached the window: the
// instance alone, or its whole gang once every member is running and idle for the window too.
// Empty while any member is not.
std::vector<std::string> idle_together(const Draft& draft, const std::string& id,
                                       const IdlePolicy& policy, TimeMs now_ms) {
  const Instance& instance = *draft.instance(id);
  if (instance.gang_id.empty()) return {id};
  std::vector<std::string> members = gang_members(draft, instance.gang_id);
  for (const std::string& member : members) {
    const Instance& m = *draft.instance(member);
    if (m.state != InstanceState::kRunning || m.stop_requested || m.idle_since_ms == 0 ||
        now_ms - m.idle_since_ms < policy.window_s * 1000) {
      return {};
    }
  }
  return members;
}

}  // namespace

std::string_view idle_action_name(IdleAction action) {
  return kIdleActionNames.name(action, "stop");
}

std::optional<IdleAction> parse_idle_action(std::string_view name) {
  return kIdleActionNames.parse(name);
}

Status check_idle_policy(const IdlePolicy& policy, const CoreOptions& options) {
  if (policy.threshold_pct < 1 || policy.threshold_pct > 100) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("the idle threshold is a percent from 1 to 100, not {}", policy.threshold_pct));
  }
  if (policy.window_s < options.idle_min_window_s || policy.window_s > limits::kMaxIdleWindowS) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("the idle window must be {} to {} seconds, not {}",
                            options.idle_min_window_s, limits::kMaxIdleWindowS, policy.window_s));
  }
  return {};
}

std::optional<IdlePolicy> idle_policy_for(const State& state, const Instance& instance) {
  if (instance.spec.idle) return instance.spec.idle;
  const Project* project = state.project(instance.project_id);
  return project != nullptr ? project->idle : std::nullopt;
}

std::string idle_reason(const IdlePolicy& policy) {
  return fmt::format("idle: GPUs under {} % for {} s", policy.threshold_pct, policy.window_s);
}

Result<Rows> apply(const State& state, const SetProjectIdle& c, TimeMs /*now_ms*/,
                   const Placing& placing) {
  const Project* project = state.project(c.project_id);
  if (project == nullptr || project->deleted_at_ms != 0) {
    return std::unexpected(not_found("project", c.project_id));
  }
  if (c.policy) {
    if (auto ok = check_idle_policy(*c.policy, placing.options); !ok)
      return std::unexpected(ok.error());
  }
  if (project->idle == c.policy) return Rows{};
  Project next = *project;
  next.idle = c.policy;
  return Rows{next};
}

void idle_heartbeat(Draft& draft, const NodeHeartbeat& beat, TimeMs previous_ms, TimeMs now_ms,
                    const CoreOptions& options) {
  const State& state = draft.base();
  std::map<int, const GpuHeartbeat*> readings;
  for (const GpuHeartbeat& gpu : beat.gpus) readings[gpu.index] = &gpu;
  // After a silence the readings before it are stale: a stretch cannot span the gap.
  const bool continuous = previous_ms != 0 && now_ms - previous_ms <= options.idle_stale_ms();
  for (const std::string& id : draft.instances_on(beat.node_id)) {
    const Instance& instance = *draft.instance(id);
    if (instance.state != InstanceState::kRunning || instance.stop_requested) continue;
    const std::optional<IdlePolicy> policy = idle_policy_for(state, instance);
    TimeMs since = 0;
    if (policy && all_under(instance, readings, policy->threshold_pct)) {
      since = continuous && instance.idle_since_ms != 0 ? instance.idle_since_ms : now_ms;
    }
    if (since != instance.idle_since_ms) {
      // Only a change is written: a steady instance costs no row per heartbeat.
      Instance& changed = draft.edit_instance(id);
      changed.idle_since_ms = since;
      changed.idle_notified = false;  // A new stretch, or none: the next notice is owed.
    }
    if (policy && since != 0 && now_ms - since >= policy->window_s * 1000) {
      const std::vector<std::string> members = idle_together(draft, id, *policy, now_ms);
      if (!members.empty()) act(draft, members, *policy, now_ms);
    }
  }
}

void idle_tick(Draft& draft, TimeMs now_ms, const CoreOptions& options) {
  for (const std::string& id : draft.base().placed) {
    if (draft.base().instance(id)->idle_since_ms == 0) continue;
    const Instance& instance = *draft.instance(id);  // As the timer's earlier steps left it.
    if (instance.state != InstanceState::kRunning) continue;
    const Node* node = draft.node(instance.node_id);
    if (node != nullptr && now_ms - node->last_heartbeat_ms <= options.idle_stale_ms()) continue;
    Instance& reset = draft.edit_instance(id);
    reset.idle_since_ms = 0;
    reset.idle_notified = false;
  }
}

}  // namespace allot
