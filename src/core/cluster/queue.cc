// The queue: admission by quotas and reservations, placement, preemption of spot work, and the
// order in which waiting instances are tried.
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/random.h"
#include "core/admission/admission.h"
#include "core/cluster/cluster.h"
#include "core/money/money.h"
#include "core/money/money_internal.h"
#include "core/regions/regions.h"

namespace allot {
namespace {

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

// The run an instance that goes back to the queue has just ended stays on as a record of its own,
// so that it is metered, posted and invoiced like any other; the instance starts afresh. The
// record's id is derived from the instance's and the run's start, so a replay derives the same.
void keep_run(Draft& draft, Instance& victim) {
  if (victim.started_at_ms == 0) {
    // It never ran: nothing to bill, only its hold to give back. (A record would take the hold,
    // but a second such preemption would derive the same record's id and drop its new hold.)
    if (!victim.hold_id.empty()) {
      money::release_hold(draft, victim);
      ++victim.postings;  // Its next hold's id stays unlike the one just voided.
    }
    return;
  }
  Instance run = victim;
  run.id = fmt::format(
      "ins_{}", sha256_hex(fmt::format("{}@{}", victim.id, victim.started_at_ms)).substr(0, 16));
  run.spec.requeue = false;
  run.reason = fmt::format("run of instance {}, which went back to the queue", victim.id);
  if (draft.instance(run.id) == nullptr) draft.add_instance(std::move(run));
  victim.started_at_ms = 0;
  victim.billed_micros = 0;
  victim.billed_to_ms = 0;
  victim.hold_id.clear();  // The record holds it now, and settles it.
  victim.hold_micros = 0;
  victim.settled = false;
  victim.billing_cap_ms = 0;
  ++victim.postings;  // Its next transfers' ids stay unlike any it used before.
}

// Preempts the victims: their billing ends now; those that asked go back to the queue.
void preempt(Draft& draft, const Victims& victims, const std::string& for_id, TimeMs now_ms) {
  for (const std::string& id : victims.ids) {
    end_instance(draft, id, InstanceState::kPreempted, now_ms,
                 fmt::format("preempted for instance {}", for_id));
    Instance& victim = draft.edit_instance(id);
    if (!victim.spec.requeue) continue;
    keep_run(draft, victim);
    victim.node_id.clear();
    victim.gpu_indices.clear();
    victim.gpu_uuids.clear();
    victim.stop_requested = false;
    victim.stop_reason.clear();
    victim.idle_since_ms = 0;
    victim.idle_notified = false;
    victim.ended_at_ms = 0;
    victim.created_at_ms = now_ms;  // Back of its class in the queue.
    transition(victim, InstanceState::kQueued, now_ms, "requeued after preemption");
  }
}

// Each tenant's dominant share, divided by its weight: the largest of its shares of the cluster's
// GPUs, CPU and memory held by its running work. Used only to order the queue, so doubles are fine.
std::map<std::string, double> weighted_shares(const Draft& draft) {
  double gpu_total = 0, cpu_total = 0, memory_total = 0;
  draft.for_each_node([&](const Node& node) {
    gpu_total += 1000.0 * static_cast<double>(node.gpus.size());
    cpu_total += static_cast<double>(node.cpu_milli);
    memory_total += static_cast<double>(node.memory_mib);
  });
  std::map<std::string, std::array<double, 3>> used;
  draft.for_each_instance([&](const Instance& instance) {
    if (is_final(instance.state) || instance.state == InstanceState::kQueued) return;
    auto& u = used[instance.tenant_id];
    u[0] += instance.milli_per_gpu() * static_cast<double>(instance.gpu_indices.size());
    u[1] += static_cast<double>(instance.spec.cpu_milli);
    u[2] += static_cast<double>(instance.spec.memory_mib);
  });
  std::map<std::string, double> shares;
  auto ratio = [](double part, double whole) { return whole > 0 ? part / whole : 0.0; };
  for (const auto& [tenant, u] : used) {
    const Tenant* t = draft.base().tenant(tenant);
    const double weight = t == nullptr ? 1.0 : static_cast<double>(std::max<int64_t>(1, t->weight));
    shares[tenant] =
        std::max({ratio(u[0], gpu_total), ratio(u[1], cpu_total), ratio(u[2], memory_total)}) /
        weight;
  }
  return shares;
}

void set_reason(Draft& draft, const std::string& id, const std::string& why) {
  if (draft.instance(id)->reason != why) draft.edit_instance(id).reason = why;
}

}  // namespace

Outcome try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Placing& placing,
                  FailedShapes* failed) {
  const Instance* current = draft.instance(id);
  if (current == nullptr || current->state != InstanceState::kQueued) return Outcome::kNoRoom;
  if (!current->gang_id.empty()) {
    return place_gang(draft, gang_members(draft, current->gang_id), now_ms, placing);
  }
  const Admission admission = admit(draft, *current, now_ms);
  if (!admission.ok) {
    set_reason(draft, id, "waits: " + admission.why);
    return Outcome::kNotAdmitted;
  }
  // The scheduler and the preemption search see the request narrowed to the admitted models.
  Instance probe = *current;
  if (!admission.models.empty()) probe.spec.gpu_models = admission.models;
  const FailedShapes::Key key =
      FailedShapes::key_of(probe.spec, may_use_process_nodes(draft.base(), probe));
  if (failed != nullptr) {
    if (auto seen = failed->why.find(key); seen != failed->why.end()) {
      set_reason(draft, id, seen->second);  // The same request found no room moments ago.
      return Outcome::kNoRoom;
    }
  }
  std::string why;
  const NodeFilter priced = hard_limits_filter(draft.base(), probe, now_ms);
  auto placement = placing.scheduler.place(draft, probe, priced, why);
  if (!placement && probe.spec.price_class != PriceClass::kSpot) {
    if (auto victims = cheapest_victims(draft, probe.spec, now_ms)) {
      preempt(draft, *victims, id, now_ms);
      if (failed != nullptr) failed->why.clear();  // Room was freed: what failed may fit now.
      placement = placing.scheduler.place(draft, probe, priced, why);
    }
  }
  if (placement) {
    Instance& placed = draft.edit_instance(id);
    bind(draft, placed, *placement, now_ms);
    hold_runway(draft, placed, *draft.node(placement->node_id), now_ms, placing.options);
    return Outcome::kPlaced;
  }
  // Name the limits that left nodes out, so that the owner sees a limit, not only a full cluster.
  if (const std::string limited = hard_limits_reason(draft, probe, now_ms); !limited.empty()) {
    why = fmt::format("waits within its limits: {}; {}", limited, why);
  }
  if (failed != nullptr) failed->why.emplace(key, why);
  set_reason(draft, id, why);
  return Outcome::kNoRoom;
}

void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing) {
  std::vector<std::string> queue(draft.base().queue.begin(), draft.base().queue.end());
  for (const Row& row : draft.rows()) {
    if (const auto* added = std::get_if<Instance>(&row);
        added != nullptr && added->state == InstanceState::kQueued &&
        draft.base().instance(added->id) == nullptr) {
      queue.push_back(added->id);
    }
  }
  const auto shares = weighted_shares(draft);
  // A gang waits as one: its members sort together, and rank 0 places them all.
  std::map<std::string, QueuePosition> position;
  for (const std::string& id : queue) {
    const Instance& i = *draft.instance(id);
    auto share = shares.find(i.tenant_id);
    position[id] = QueuePosition{
        .priority = i.spec.price_class == PriceClass::kSpot ? 1 : 0,
        .weighted_share = share == shares.end() ? 0.0 : share->second,
        .created_ms = i.created_at_ms,
        .key = i.gang_id.empty() ? id : fmt::format("{}#{:04}", i.gang_id, i.gang_rank)};
  }
  std::sort(queue.begin(), queue.end(), [&](const std::string& a, const std::string& b) {
    return placing.scheduler.queue_before(position.at(a), position.at(b));
  });
  bool head_blocked = false;
  bool head_starving = false;
  size_t backfilled = 0;
  // Placements only take room, so within one pass a request shape that found none finds none
  // again (until a preemption frees some): a long queue of alike requests costs one try.
  FailedShapes failed;
  for (const std::string& id : queue) {
    const Instance* instance = draft.instance(id);
    if (instance->state != InstanceState::kQueued || instance->gang_rank != 0) continue;
    if (head_blocked && (head_starving || backfilled >= placing.options.max_backfill)) break;
    const TimeMs waited_ms = now_ms - instance->created_at_ms;
    const Outcome outcome = try_place(draft, id, now_ms, placing, &failed);
    // Work that the rules hold back blocks nobody: it waits for its own tenant's usage to fall.
    if (outcome == Outcome::kNotAdmitted) continue;
    if (head_blocked) {
      ++backfilled;
    } else if (outcome == Outcome::kNoRoom) {
      head_blocked = true;
      head_starving = waited_ms >= placing.options.starvation_ms;
    }
  }
}

}  // namespace allot
