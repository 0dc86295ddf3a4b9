// Instances: creation, stopping, placement and the lifecycle's transitions.
#include <algorithm>
#include <array>
#include <cassert>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/environment.h"
#include "common/limits.h"
#include "core/admission/admission.h"
#include "core/admission/quote.h"
#include "core/cluster/cluster.h"
#include "core/cluster/idle.h"
#include "core/cluster/volumes.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"
#include "core/money/money.h"

namespace allot {

Status check_gpu_request(const InstanceSpec& spec) {
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
      const std::string near = nearest_gpu_model(model);
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("unknown GPU model '{}'{}", model,
                              near.empty() ? "" : fmt::format("; did you mean {}?", near)));
    }
  }
  return check_wishes(wishes_of(spec));
}

Status check_instance_spec(const InstanceSpec& spec) {
  if (auto ok = check_gpu_request(spec); !ok) return ok;
  if (spec.command.empty() || spec.command.front().empty()) {
    return fail(ErrorCode::kInvalidArgument, "command must not be empty");
  }
  if (spec.command.size() > limits::kMaxCommandArgs) {
    return fail(ErrorCode::kLimitExceeded, "the command has too many arguments");
  }
  if (auto ok = check_tenant_environment(spec.env); !ok) return ok;
  for (const auto& [name, value] : spec.labels) {
    if (auto ok = check_name("label name", name); !ok) return ok;
  }
  if (spec.nodes < 1 || spec.nodes > limits::kMaxGangNodes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("nodes must be 1 to {}", limits::kMaxGangNodes));
  }
  if (spec.nodes > 1 && spec.gpus == 0) {
    return fail(ErrorCode::kInvalidArgument,
                "a multi-node instance takes whole GPUs on each node, not a fraction");
  }
  if (spec.nodes > 1 && spec.requeue) {
    return fail(ErrorCode::kInvalidArgument,
                "a multi-node instance cannot requeue: its members start together or not at all");
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

Result<Rows> apply(const State& state, const CreateInstance& c, TimeMs now_ms,
                   const Placing& placing) {
  if (auto ok = check_id("id", c.id, "ins"); !ok) return std::unexpected(ok.error());
  const Project* project = state.project(c.project_id);
  if (project == nullptr || project->deleted_at_ms != 0 || project->tenant_id != c.tenant_id) {
    return std::unexpected(not_found("project", c.project_id));
  }
  if (auto ok = check_instance_spec(c.spec); !ok) return std::unexpected(ok.error());
  if (!c.spec.service_id.empty()) {
    const HostedService* service = state.service(c.spec.service_id);
    if (service == nullptr || service->deleted() || service->tenant_id != c.tenant_id) {
      return std::unexpected(not_found("service", c.spec.service_id));
    }
    if (service->revision_of(c.spec.service_revision) == nullptr || !c.member_ids.empty()) {
      return fail(ErrorCode::kInvalidArgument, "a replica is of one of its service's revisions");
    }
  }
  if (auto ok = check_volume_mounts(state, c.tenant_id, c.spec); !ok) {
    return std::unexpected(ok.error());
  }
  if (c.spec.idle) {
    if (auto ok = check_idle_policy(*c.spec.idle, placing.options); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (c.member_ids.size() + 1 != static_cast<size_t>(c.spec.nodes)) {
    return fail(ErrorCode::kInvalidArgument, "a gang needs one member id per node after the first");
  }
  if (!c.launch_key.empty()) {
    if (auto ok = check_idempotency_key("an Idempotency-Key", c.launch_key); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto used = state.launch_by_key.find({c.tenant_id, c.launch_key});
        used != state.launch_by_key.end()) {
      return fail(ErrorCode::kAlreadyExists,
                  fmt::format("the Idempotency-Key launched {} already", used->second));
    }
  }
  std::vector<std::string> ids{c.id};
  ids.insert(ids.end(), c.member_ids.begin(), c.member_ids.end());
  for (const std::string& id : ids) {
    if (auto ok = check_id("id", id, "ins"); !ok) return std::unexpected(ok.error());
    if (state.instance(id) != nullptr || std::count(ids.begin(), ids.end(), id) > 1) {
      return fail(ErrorCode::kAlreadyExists, "instance id taken");
    }
  }
  auto active = state.active_by_tenant.find(c.tenant_id);
  if (active != state.active_by_tenant.end() &&
      active->second + ids.size() > static_cast<size_t>(placing.options.max_active_per_tenant)) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("the tenant runs or queues the most instances it may ({})",
                            placing.options.max_active_per_tenant));
  }
  if (auto ok = check_admissible(state, c.tenant_id, c.project_id, c.spec, now_ms); !ok) {
    return std::unexpected(ok.error());
  }
  Draft draft(state);
  // No new work starts on money that is used up: the caller hears it at once.
  if (auto why = funds_block(draft, c.tenant_id, now_ms)) {
    return fail(ErrorCode::kInsufficientFunds, *why);
  }
  for (size_t rank = 0; rank < ids.size(); ++rank) {
    Instance instance{.id = ids[rank],
                      .tenant_id = c.tenant_id,
                      .project_id = c.project_id,
                      .user_id = c.user_id,
                      .spec = c.spec,
                      .created_at_ms = now_ms,
                      .gang_id = ids.size() > 1 ? c.id : "",
                      .gang_rank = static_cast<int>(rank)};
    if (rank == 0) {
      instance.launch_key = c.launch_key;
      instance.launch_digest = c.launch_digest;
    }
    transition(instance, InstanceState::kQueued, now_ms, "waiting for a placement");
    draft.add_instance(std::move(instance));
  }
  // With nothing waiting, only the newcomer needs trying; otherwise it takes its place in the
  // queue's order (it must not pass a starving head).
  if (state.queue.empty()) {
    try_place(draft, c.id, now_ms, placing);
  } else {
    schedule_queue(draft, now_ms, placing);
  }
  return draft.rows();
}

Result<Rows> apply(const State& state, const StopInstance& c, TimeMs now_ms,
                   const Placing& placing) {
  const Instance* instance = state.instance(c.id);
  if (instance == nullptr) return std::unexpected(not_found("instance", c.id));
  if (is_final(instance->state) || instance->stop_requested) return Rows{};
  Draft draft(state);
  // Stopping one member of a gang stops the gang.
  const std::vector<std::string> ids = instance->gang_id.empty()
                                           ? std::vector<std::string>{c.id}
                                           : gang_members(draft, instance->gang_id);
  for (const std::string& id : ids) {
    stop_member(draft, id, now_ms,
                id == c.id ? std::string("stop requested") : "gang member " + c.id + " stopped");
  }
  schedule_queue(draft, now_ms, placing);  // What ended at once is free again.
  return draft.rows();
}

namespace {

// Keeps the tenant's Resources true as `before` (null: new) becomes `after`.
void keep_use(State& state, const Instance* before, const Instance& after) {
  const Resources gone = before == nullptr ? Resources{} : Resources::of(*before);
  const Resources added = Resources::of(after);
  if (gone == added) return;
  Resources& use = state.use_by_tenant[after.tenant_id];
  use.add(gone, -1);
  use.add(added, 1);
  if (use.empty()) state.use_by_tenant.erase(after.tenant_id);
}

// Takes the queued `instance` out of its stream (which goes when empty).
void unqueue(State& state, const Instance& instance) {
  auto stream = state.queue_streams.find(QueueStream::of(instance));
  assert(stream != state.queue_streams.end());
  stream->second.erase(QueueEntry::of(instance));
  if (stream->second.empty()) state.queue_streams.erase(stream);
}

// Moves an instance in the per-node index of placed work, from where it was to where it is.
void keep_placed_on(State& state, bool was_placed, const std::string& before_node,
                    const Instance& now, bool is_placed) {
  if (was_placed == is_placed && before_node == now.node_id) return;
  if (was_placed) {
    auto it = state.placed_on.find(before_node);
    assert(it != state.placed_on.end());
    it->second.erase(now.id);
    if (it->second.empty()) state.placed_on.erase(it);
  }
  if (is_placed) state.placed_on[now.node_id].insert(now.id);
}

// Moves an instance in the index of volumes' users: in while it has not ended.
void keep_mounts(State& state, const Instance* active_before, const Instance& now) {
  if (active_before != nullptr) {
    for (const VolumeMount& mount : active_before->spec.volumes) {
      auto it = state.mounts_by_volume.find(mount.volume_id);
      if (it == state.mounts_by_volume.end()) continue;
      it->second.erase(now.id);
      if (it->second.empty()) state.mounts_by_volume.erase(it);
    }
  }
  if (is_final(now.state)) return;
  for (const VolumeMount& mount : now.spec.volumes) {
    state.mounts_by_volume[mount.volume_id].insert(now.id);
  }
}

// Moves a service's replica in the index of replicas: in while it has not ended.
void keep_replicas(State& state, const Instance& now) {
  if (now.spec.service_id.empty()) return;
  if (!is_final(now.state)) {
    state.replicas_by_service[now.spec.service_id].insert(now.id);
    return;
  }
  auto it = state.replicas_by_service.find(now.spec.service_id);
  if (it == state.replicas_by_service.end()) return;
  it->second.erase(now.id);
  if (it->second.empty()) state.replicas_by_service.erase(it);
}

}  // namespace

void put(State& state, const Instance& instance) {
  auto old = state.instances.find(instance.id);
  const bool was_queued =
      old != state.instances.end() && old->second.state == InstanceState::kQueued;
  const bool is_queued = instance.state == InstanceState::kQueued;
  const bool was_active = old != state.instances.end() && !is_final(old->second.state);
  // An instance never changes tenant: the per-tenant indexes below rely on it.
  assert(old == state.instances.end() || old->second.tenant_id == instance.tenant_id);
  assert(!instance.id.empty() && !instance.tenant_id.empty());
  if (was_active) {
    auto shape = state.active_by_shape.find(work_shape(old->second.spec));
    assert(shape != state.active_by_shape.end());
    shape->second.erase(instance.id);
    if (shape->second.empty()) state.active_by_shape.erase(shape);
  }
  if (!is_final(instance.state))
    state.active_by_shape[work_shape(instance.spec)].insert(instance.id);
  keep_mounts(state, was_active ? &old->second : nullptr, instance);
  keep_replicas(state, instance);
  if (was_active != !is_final(instance.state)) {
    size_t& active = state.active_by_tenant[instance.tenant_id];
    assert(!was_active || active > 0);
    active = was_active ? active - 1 : active + 1;
    // No entry rather than a zero: the index is the same however the state was built.
    if (active == 0) state.active_by_tenant.erase(instance.tenant_id);
  }
  const Instance* before = old == state.instances.end() ? nullptr : &old->second;
  const bool was_placed =
      before != nullptr && before->state != InstanceState::kQueued && !is_final(before->state);
  const std::string before_node = before != nullptr ? before->node_id : std::string();
  keep_use(state, before, instance);
  if (before != nullptr) state.count_held(*before, -1);
  state.count_held(instance, 1);
  if (was_queued) unqueue(state, *before);
  state.instances[instance.id] = instance;
  if (!instance.launch_key.empty()) {
    state.launch_by_key[{instance.tenant_id, instance.launch_key}] = instance.id;
  }
  if (is_queued) state.queue_streams[QueueStream::of(instance)].insert(QueueEntry::of(instance));
  auto& unsettled = state.unsettled_by_tenant;
  if ((instance.started_at_ms != 0 || !instance.hold_id.empty()) && !instance.settled) {
    unsettled[instance.tenant_id].insert(instance.id);
  } else if (auto held = unsettled.find(instance.tenant_id); held != unsettled.end()) {
    held->second.erase(instance.id);
    if (held->second.empty()) unsettled.erase(held);
  }
  const bool is_placed = !is_queued && !is_final(instance.state);
  if (is_placed) {
    state.placed.insert(instance.id);
  } else {
    state.placed.erase(instance.id);
  }
  if (is_placed && instance.spec.price_class == PriceClass::kSpot) {
    state.placed_spot.insert(instance.id);
  } else {
    state.placed_spot.erase(instance.id);
  }
  keep_placed_on(state, was_placed, before_node, instance, is_placed);
  if (was_queued && !is_queued) state.queue.erase(instance.id);
  if (is_queued && !was_queued) state.queue.insert(instance.id);
  assert(state.queue.contains(instance.id) == is_queued);
}

}  // namespace allot
