// Instances: creation, stopping, placement and the lifecycle's transitions.
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

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

// The GPU-seconds a running instance would lose if it were stopped now.
int64_t loss_if_stopped(const Instance& instance, TimeMs now_ms) {
  if (instance.state != InstanceState::kRunning) return 0;
  const int64_t milli =
      instance.milli_per_gpu() * static_cast<int64_t>(instance.gpu_indices.size());
  return milli * std::max<int64_t>(0, now_ms - instance.started_at_ms) / 1000;
}

struct Victims {
  std::string node_id;
  std::vector<std::string> ids;
  int64_t loss = 0;
};

// The cheapest set of spot instances on one node whose removal lets `spec` fit there: the node's
// spot work taken in order of least loss until it fits. Over all nodes, the set losing the fewest
// GPU-seconds wins (then fewer victims, then the node's id).
std::optional<Victims> cheapest_victims(const Draft& draft, const InstanceSpec& spec,
                                        TimeMs now_ms) {
  std::optional<Victims> best;
  const size_t wanted = spec.gpus > 0 ? static_cast<size_t>(spec.gpus) : 1;
  draft.for_each_node([&](const Node& node) {
    if (!node_takes_work(node)) return;
    std::vector<const Instance*> spot;
    for (const std::string& id : draft.instances_on(node.id)) {
      const Instance* instance = draft.instance(id);
      if (instance->spec.price_class == PriceClass::kSpot && !instance->stop_requested) {
        spot.push_back(instance);
      }
    }
    std::sort(spot.begin(), spot.end(), [&](const Instance* a, const Instance* b) {
      return std::pair(loss_if_stopped(*a, now_ms), a->id) <
             std::pair(loss_if_stopped(*b, now_ms), b->id);
    });
    Node freed = node;
    Victims victims{.node_id = node.id};
    for (const Instance* victim : spot) {
      if (fitting_gpus(freed, spec).size() >= wanted) break;
      for (int index : victim->gpu_indices) {
        freed.gpus.at(static_cast<size_t>(index)).used_milli -= victim->milli_per_gpu();
      }
      freed.used_cpu_milli -= victim->spec.cpu_milli;
      freed.used_memory_mib -= victim->spec.memory_mib;
      victims.ids.push_back(victim->id);
      victims.loss += loss_if_stopped(*victim, now_ms);
    }
    if (victims.ids.empty() || fitting_gpus(freed, spec).size() < wanted) return;
    if (!best || std::tuple(victims.loss, victims.ids.size(), victims.node_id) <
                     std::tuple(best->loss, best->ids.size(), best->node_id)) {
      best = std::move(victims);
    }
  });
  return best;
}

// Preempts the victims: their billing ends now; those that asked go back to the queue.
void preempt(Draft& draft, const Victims& victims, const std::string& for_id, TimeMs now_ms) {
  for (const std::string& id : victims.ids) {
    end_instance(draft, id, InstanceState::kPreempted, now_ms,
                 fmt::format("preempted for on-demand instance {}", for_id));
    Instance& victim = draft.edit_instance(id);
    if (!victim.spec.requeue) continue;
    victim.node_id.clear();
    victim.gpu_indices.clear();
    victim.gpu_uuids.clear();
    victim.stop_requested = false;
    victim.ended_at_ms = 0;
    victim.created_at_ms = now_ms;  // Back of its class in the queue.
    transition(victim, InstanceState::kQueued, now_ms, "requeued after preemption");
  }
}

// Places one queued instance if it fits (preempting spot work for on-demand and reserved work if
// that is the only way), or records why it waits. Returns whether it was placed.
bool try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Placing& placing) {
  const Instance* current = draft.instance(id);
  if (current == nullptr || current->state != InstanceState::kQueued) return false;
  std::string why;
  auto placement = placing.scheduler.place(draft, *current, why);
  if (!placement && current->spec.price_class != PriceClass::kSpot) {
    if (auto victims = cheapest_victims(draft, current->spec, now_ms)) {
      preempt(draft, *victims, id, now_ms);
      placement = placing.scheduler.place(draft, *draft.instance(id), why);
    }
  }
  if (placement) {
    bind(draft, draft.edit_instance(id), *placement, now_ms);
    return true;
  }
  if (current->reason != why) draft.edit_instance(id).reason = why;
  return false;
}

// Each tenant's dominant share: the largest of its shares of the cluster's GPUs, CPU and memory
// held by its running work. Used only to order the queue, so doubles are fine here.
std::map<std::string, double> dominant_shares(const Draft& draft) {
  double gpu_total = 0, cpu_total = 0, memory_total = 0;
  draft.for_each_node([&](const Node& node) {
    gpu_total += 1000.0 * static_cast<double>(node.gpus.size());
    cpu_total += static_cast<double>(node.cpu_milli);
    memory_total += static_cast<double>(node.memory_mib);
  });
  std::map<std::string, std::array<double, 3>> used;
  for (const auto& [id, base] : draft.base().instances) {
    const Instance& instance = *draft.instance(id);
    if (is_final(instance.state) || instance.state == InstanceState::kQueued) continue;
    auto& u = used[instance.tenant_id];
    u[0] += instance.milli_per_gpu() * static_cast<double>(instance.gpu_indices.size());
    u[1] += static_cast<double>(instance.spec.cpu_milli);
    u[2] += static_cast<double>(instance.spec.memory_mib);
  }
  std::map<std::string, double> shares;
  auto ratio = [](double part, double whole) { return whole > 0 ? part / whole : 0.0; };
  for (const auto& [tenant, u] : used) {
    shares[tenant] =
        std::max({ratio(u[0], gpu_total), ratio(u[1], cpu_total), ratio(u[2], memory_total)});
  }
  return shares;
}

void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing) {
  std::vector<std::string> queue = draft.base().queue;
  for (const Row& row : draft.rows()) {
    if (const auto* added = std::get_if<Instance>(&row);
        added != nullptr && added->state == InstanceState::kQueued &&
        draft.base().instance(added->id) == nullptr) {
      queue.push_back(added->id);
    }
  }
  const auto shares = dominant_shares(draft);
  auto key = [&](const std::string& id) {
    const Instance& i = *draft.instance(id);
    auto share = shares.find(i.tenant_id);
    return std::tuple(i.spec.price_class == PriceClass::kSpot ? 1 : 0,
                      share == shares.end() ? 0.0 : share->second, i.created_at_ms, id);
  };
  std::sort(queue.begin(), queue.end(),
            [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
  bool head_blocked = false;
  bool head_starving = false;
  size_t backfilled = 0;
  for (const std::string& id : queue) {
    if (head_blocked && (head_starving || backfilled >= placing.options.max_backfill)) break;
    const TimeMs waited_ms = now_ms - draft.instance(id)->created_at_ms;
    const bool placed = try_place(draft, id, now_ms, placing);
    if (head_blocked) {
      ++backfilled;
    } else if (!placed) {
      head_blocked = true;
      head_starving = waited_ms >= placing.options.starvation_ms;
    }
  }
}

Result<Rows> create_instance(const State& state, const CreateInstance& c, TimeMs now_ms,
                             const Placing& placing) {
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
  // With nothing waiting, only the newcomer needs trying; otherwise it takes its place in the
  // queue's order (it must not pass a starving head).
  if (state.queue.empty()) {
    try_place(draft, c.id, now_ms, placing);
  } else {
    schedule_queue(draft, now_ms, placing);
  }
  return draft.rows();
}

Result<Rows> stop_instance(const State& state, const StopInstance& c, TimeMs now_ms,
                           const Placing& placing) {
  const Instance* instance = state.instance(c.id);
  if (instance == nullptr) return fail(ErrorCode::kNotFound, fmt::format("no instance {}", c.id));
  if (is_final(instance->state) || instance->stop_requested) return Rows{};
  Draft draft(state);
  if (instance->state == InstanceState::kQueued || instance->state == InstanceState::kScheduled) {
    // Nothing runs yet: it ends now, and none of its time is billed.
    end_instance(draft, c.id, InstanceState::kStopped, now_ms, "stopped before it started");
    schedule_queue(draft, now_ms, placing);  // What it held is free again.
    return draft.rows();
  }
  Instance& stopping = draft.edit_instance(c.id);
  stopping.stop_requested = true;
  stopping.events.push_back(InstanceEvent{now_ms, "", "stop requested"});
  ++draft.edit_node(stopping.node_id).generation;
  return draft.rows();
}

}  // namespace allot
