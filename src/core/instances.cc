// Instances: creation, stopping, placement and the lifecycle's transitions.
#include <fmt/format.h>

#include "common/limits.h"
#include "core/cluster_ops.h"
#include "core/gpu_models.h"
#include "core/validate.h"

namespace allot {
namespace {

Status check_spec(const InstanceSpec& spec) {
  if (spec.gpus != 0 && spec.gpu_milli != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "a fraction of a GPU (gpu_milli) cannot be combined with a GPU count");
  }
  if (spec.gpu_milli == 0 && (spec.gpus < 1 || spec.gpus > limits::kMaxGpusPerInstance)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("gpus must be 1 to {}", limits::kMaxGpusPerInstance));
  }
  if (spec.gpus == 0 && (spec.gpu_milli < 1 || spec.gpu_milli > 999)) {
    return fail(ErrorCode::kInvalidArgument, "gpu_milli must be 1 to 999 (a fraction of one GPU)");
  }
  for (const std::string& model : spec.gpu_models) {
    if (!is_known_gpu_model(model)) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("unknown GPU model '{}'", model));
    }
  }
  if (spec.command.empty() || spec.command.front().empty()) {
    return fail(ErrorCode::kInvalidArgument, "command must not be empty");
  }
  if (spec.command.size() > limits::kMaxCommandArgs) {
    return fail(ErrorCode::kLimitExceeded, "the command has too many arguments");
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("bad environment name '{}'", name));
    }
  }
  for (const auto& [name, value] : spec.labels) {
    if (auto ok = check_name("label name", name); !ok) return ok;
  }
  if (spec.cpu_milli < 0 || spec.memory_mib < 0 || spec.max_run_s < 0) {
    return fail(ErrorCode::kInvalidArgument, "cpu_milli, memory_mib and max_run_s must be >= 0");
  }
  return {};
}

void bind(Draft& draft, Instance& instance, const Placement& placement, TimeMs now_ms) {
  Node& node = draft.edit_node(placement.node_id);
  instance.node_id = node.id;
  instance.gpu_indices = placement.gpu_indices;
  instance.gpu_uuids.clear();
  for (int index : placement.gpu_indices) {
    Gpu& gpu = node.gpus.at(static_cast<size_t>(index));
    gpu.used_milli += instance.milli_per_gpu();
    instance.gpu_uuids.push_back(gpu.uuid);
  }
  node.used_cpu_milli += instance.spec.cpu_milli;
  node.used_memory_mib += instance.spec.memory_mib;
  ++node.generation;
  transition(instance, InstanceState::kScheduled, now_ms,
             fmt::format("placed on {} GPUs {}", node.name, fmt::join(placement.gpu_indices, ",")));
}

}  // namespace

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
  if (!held) return;
  Node& node = draft.edit_node(instance.node_id);
  for (int index : instance.gpu_indices) {
    node.gpus.at(static_cast<size_t>(index)).used_milli -= instance.milli_per_gpu();
  }
  node.used_cpu_milli -= instance.spec.cpu_milli;
  node.used_memory_mib -= instance.spec.memory_mib;
  ++node.generation;
}

// Places one queued instance if it fits, or records why it waits.
void try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Scheduler& scheduler) {
  const Instance* current = draft.instance(id);
  if (current == nullptr || current->state != InstanceState::kQueued) return;
  std::string why;
  auto placement = scheduler.place(draft, *current, why);
  if (placement) {
    bind(draft, draft.edit_instance(id), *placement, now_ms);
  } else if (current->reason != why) {
    draft.edit_instance(id).reason = why;
  }
}

void schedule_queue(Draft& draft, TimeMs now_ms, const Scheduler& scheduler) {
  std::vector<std::string> queue = draft.base().queue;
  for (const Row& row : draft.rows()) {
    if (const auto* added = std::get_if<Instance>(&row);
        added != nullptr && added->state == InstanceState::kQueued &&
        draft.base().instance(added->id) == nullptr) {
      queue.push_back(added->id);
    }
  }
  for (const std::string& id : queue) try_place(draft, id, now_ms, scheduler);
}

Result<Rows> create_instance(const State& state, const CreateInstance& c, TimeMs now_ms,
                             const Scheduler& scheduler) {
  if (auto ok = check_id("id", c.id, "ins"); !ok) return std::unexpected(ok.error());
  const Project* project = state.project(c.project_id);
  if (project == nullptr || project->deleted_at_ms != 0 || project->tenant_id != c.tenant_id) {
    return fail(ErrorCode::kNotFound, fmt::format("no project {}", c.project_id));
  }
  if (auto ok = check_spec(c.spec); !ok) return std::unexpected(ok.error());
  if (state.instance(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "instance id taken");
  auto active = state.active_by_tenant.find(c.tenant_id);
  if (active != state.active_by_tenant.end() &&
      active->second >= limits::kMaxActiveInstancesPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant runs or queues the most instances it may");
  }
  Draft draft(state);
  Instance instance{.id = c.id,
                    .tenant_id = c.tenant_id,
                    .project_id = c.project_id,
                    .user_id = c.user_id,
                    .spec = c.spec,
                    .created_at_ms = now_ms};
  transition(instance, InstanceState::kQueued, now_ms, "waiting for a placement");
  draft.add_instance(std::move(instance));
  // Only the newcomer: the queued ones were tried when capacity last appeared, and a new
  // instance adds none.
  try_place(draft, c.id, now_ms, scheduler);
  return draft.rows();
}

Result<Rows> stop_instance(const State& state, const StopInstance& c, TimeMs now_ms) {
  const Instance* instance = state.instance(c.id);
  if (instance == nullptr) return fail(ErrorCode::kNotFound, fmt::format("no instance {}", c.id));
  if (is_final(instance->state) || instance->stop_requested) return Rows{};
  Draft draft(state);
  if (instance->state == InstanceState::kQueued || instance->state == InstanceState::kScheduled) {
    // Nothing runs yet: it ends now, and none of its time is billed.
    end_instance(draft, c.id, InstanceState::kStopped, now_ms, "stopped before it started");
    return draft.rows();
  }
  Instance& stopping = draft.edit_instance(c.id);
  stopping.stop_requested = true;
  stopping.events.push_back(InstanceEvent{now_ms, "", "stop requested"});
  ++draft.edit_node(stopping.node_id).generation;
  return draft.rows();
}

}  // namespace allot
