// The queue: admission by quotas and reservations, placement, preemption of spot work, and the
// order in which waiting instances are tried.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/random.h"
#include "core/admission/admission.h"
#include "core/cluster/cluster.h"
#include "core/cluster/volumes.h"
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

// The cheapest set of spot instances on one node that `only` admits whose removal lets `spec` fit
// there: the node's spot work taken in order of least loss until it fits. Over those nodes, the set
// losing the fewest GPU-seconds wins (then fewer victims, then the node's id).
std::optional<Victims> cheapest_victims(const Draft& draft, const InstanceSpec& spec,
                                        const NodeFilter& only, TimeMs now_ms) {
  std::optional<Victims> best;
  const size_t wanted = spec.gpus > 0 ? static_cast<size_t>(spec.gpus) : 1;
  // Only nodes with spot work on them can give victims: those the state's index names and those
  // of spot work this command placed, in id order.
  std::set<std::string> with_spot;
  for (const std::string& id : draft.base().placed_spot) {
    with_spot.insert(draft.base().instance(id)->node_id);
  }
  draft.for_each_changed_instance([&](const Instance& instance) {
    if (instance.spec.price_class == PriceClass::kSpot && !instance.node_id.empty()) {
      with_spot.insert(instance.node_id);
    }
  });
  for (const std::string& node_id : with_spot) {
    const Node* found = draft.node(node_id);
    // A node the request may not run on (its limits, its volumes' node) gives no victims: they
    // would be stopped for nothing.
    if (found == nullptr || !node_takes_work(*found) || !only(*found)) continue;
    const Node& node = *found;
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
    if (victims.ids.empty() || fitting_gpus(freed, spec).size() < wanted) continue;
    if (!best || std::tuple(victims.loss, victims.ids.size(), victims.node_id) <
                     std::tuple(best->loss, best->ids.size(), best->node_id)) {
      best = std::move(victims);
    }
  }
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
    victim.last_node_id = victim.node_id;
    ++victim.run;
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
// GPUs, CPU and memory held by its placed work. Used only to order the queue, so doubles are fine.
// Read from the state's per-tenant index, corrected for what this command has changed so far, and
// only for the tenants a pass meets (the index may hold many more).
class WeightedShares {
 public:
  explicit WeightedShares(const Draft& draft) : base_(draft.base()) {
    Resources total = base_.capacity;
    draft.for_each_changed_node([&](const Node& now) {
      if (const Node* before = base_.node(now.id)) total.add(Resources::capacity_of(*before), -1);
      total.add(Resources::capacity_of(now), 1);
    });
    total_ = total;
    draft.for_each_changed_instance([&](const Instance& now) {
      Resources& delta = changed_[now.tenant_id];
      if (const Instance* before = base_.instance(now.id)) delta.add(Resources::of(*before), -1);
      delta.add(Resources::of(now), 1);
    });
  }

  double of(const std::string& tenant) {
    auto known = shares_.find(tenant);
    if (known != shares_.end()) return known->second;
    Resources u;
    if (auto held = base_.use_by_tenant.find(tenant); held != base_.use_by_tenant.end()) {
      u = held->second;
    }
    if (auto delta = changed_.find(tenant); delta != changed_.end()) u.add(delta->second, 1);
    auto ratio = [](int64_t part, int64_t whole) {
      return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    const Tenant* t = base_.tenant(tenant);
    const double weight = t == nullptr ? 1.0 : static_cast<double>(std::max<int64_t>(1, t->weight));
    const double share =
        u.empty()
            ? 0.0
            : std::max({ratio(u.gpu_milli, total_.gpu_milli), ratio(u.cpu_milli, total_.cpu_milli),
                        ratio(u.memory_mib, total_.memory_mib)}) /
                  weight;
    return shares_.emplace(tenant, share).first->second;
  }

 private:
  const State& base_;
  Resources total_;
  std::map<std::string, Resources> changed_;  // What this command's changes add, per tenant.
  std::map<std::string, double> shares_;      // Those worked out so far.
};

void set_reason(Draft& draft, const std::string& id, const std::string& why) {
  if (draft.instance(id)->reason != why) draft.edit_instance(id).reason = why;
}

// Why work held by its local volumes to `node_id` waits: plainly so when that node cannot take
// work, since nothing else can run it and the owner must act or wait for the node.
std::string pinned_reason(const Draft& draft, const std::string& node_id, const std::string& why) {
  const Node* node = draft.node(node_id);
  const NodeState state = node == nullptr ? NodeState::kDeleted : node->state();
  switch (state) {
    case NodeState::kDeleted:
      return fmt::format(
          "its local volumes are on node {}, which was deleted: their data went with it; stop "
          "this instance and launch it without them",
          node_id);
    case NodeState::kLost:
      return fmt::format(
          "its local volumes are on node {}, which is lost: it runs when the node's agent comes "
          "back, or stop it",
          node_id);
    case NodeState::kCordoned:
    case NodeState::kDraining:
      return fmt::format(
          "its local volumes are on node {}, which is cordoned: it runs when an operator "
          "uncordons the node, or stop it",
          node_id);
    default:
      return fmt::format("its local volumes are on node {}: {}", node_id, why);
  }
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
  // Work that mounts volumes may be held to one node or region: its shape alone does not say
  // where it fits, so what other work found does not speak for it.
  const bool by_shape = probe.spec.volumes.empty();
  if (failed != nullptr && by_shape) {
    if (auto seen = failed->why.find(key); seen != failed->why.end()) {
      set_reason(draft, id, seen->second);  // The same request found no room moments ago.
      return Outcome::kNoRoom;
    }
  }
  std::string why;
  NodeFilter priced = hard_limits_filter(draft.base(), probe, now_ms);
  const std::optional<std::string> pinned = volume_node(draft, probe);
  if (pinned) {
    // Its local volumes are on that node: it runs there or waits.
    priced = [limits = std::move(priced), node = *pinned](const Node& candidate) {
      return candidate.id == node && limits(candidate);
    };
  }
  auto placement = placing.scheduler.place(draft, probe, priced, why);
  if (!placement && probe.spec.price_class != PriceClass::kSpot) {
    if (auto victims = cheapest_victims(draft, probe.spec, priced, now_ms)) {
      preempt(draft, *victims, id, now_ms);
      if (failed != nullptr) {
        failed->why.clear();  // Room was freed: what failed may fit now.
        ++failed->preemptions;
      }
      placement = placing.scheduler.place(draft, probe, priced, why);
    }
  }
  if (placement) {
    Instance& placed = draft.edit_instance(id);
    bind(draft, placed, *placement, now_ms);
    bind_volumes(draft, placed);
    hold_runway(draft, placed, *draft.node(placement->node_id), now_ms, placing.options);
    return Outcome::kPlaced;
  }
  // Name the limits that left nodes out, so that the owner sees a limit, not only a full cluster.
  if (const std::string limited = hard_limits_reason(draft, probe, now_ms); !limited.empty()) {
    why = fmt::format("waits within its limits: {}; {}", limited, why);
  }
  if (pinned) why = pinned_reason(draft, *pinned, why);
  if (failed != nullptr && by_shape) failed->why.emplace(key, why);
  set_reason(draft, id, why);
  return Outcome::kNoRoom;
}

namespace {

// One stream of the queue as this pass reads it: the state's entries merged with the new work this
// command queued, in the stream's order.
struct StreamCursor {
  const QueueStream* stream;
  std::set<QueueEntry>::const_iterator base, base_end;
  std::vector<QueueEntry> added;  // Sorted.
  size_t next_added = 0;

  bool done() const { return base == base_end && next_added == added.size(); }
  const QueueEntry& head() const {
    if (next_added == added.size()) return *base;
    if (base == base_end) return added[next_added];
    return *base < added[next_added] ? *base : added[next_added];
  }
  void advance() {
    if (next_added == added.size() || (base != base_end && *base < added[next_added])) {
      ++base;
    } else {
      ++next_added;
    }
  }
};

// The queue's streams merged into one order, the scheduler's: a heap of the streams' heads. Each
// stream is in order already (one priority and share, then arrival), so popping the least head
// each time gives the order a sort of the whole queue would, at a cost of log(streams) an entry.
class QueueMerge {
 public:
  QueueMerge(const Draft& draft, const Scheduler& scheduler)
      : scheduler_(scheduler), shares_(draft) {
    const State& base = draft.base();
    std::map<QueueStream, std::vector<QueueEntry>> added;
    // New work this command queued joins the pass; work it sent back to the queue (a preempted
    // instance that asked to be requeued) waits for the next one, as it always has.
    draft.for_each_changed_instance([&](const Instance& now) {
      if (now.state == InstanceState::kQueued && base.instance(now.id) == nullptr) {
        added[QueueStream::of(now)].push_back(QueueEntry::of(now));
      }
    });
    cursors_.reserve(base.queue_streams.size() + added.size());
    for (const auto& [stream, entries] : base.queue_streams) {
      cursors_.push_back(StreamCursor{
          .stream = &stream, .base = entries.begin(), .base_end = entries.end(), .added = {}});
    }
    static const std::set<QueueEntry> kNone;
    const auto base_end = static_cast<std::ptrdiff_t>(cursors_.size());
    for (auto& [stream, entries] : added) {
      std::sort(entries.begin(), entries.end());
      // The base streams' cursors are in the streams' order, as the state's map holds them.
      auto at = std::lower_bound(
          cursors_.begin(), cursors_.begin() + base_end, stream,
          [](const StreamCursor& c, const QueueStream& s) { return *c.stream < s; });
      if (at != cursors_.begin() + base_end && *at->stream == stream) {
        at->added = std::move(entries);
      } else {
        added_streams_.push_back(stream);
        cursors_.push_back(StreamCursor{.stream = &added_streams_.back(),
                                        .base = kNone.end(),
                                        .base_end = kNone.end(),
                                        .added = std::move(entries)});
      }
    }
    for (size_t i = 0; i < cursors_.size(); ++i) push(i);
  }

  bool empty() const { return heap_.empty(); }

  // The least head, taken: its entry, its stream's cursor (moved past it; push() puts the stream
  // back) and its place in the order.
  struct Taken {
    QueueEntry entry;
    size_t cursor;
    QueuePosition position;
  };
  Taken take() {
    std::pop_heap(heap_.begin(), heap_.end(), later_);
    Head head = std::move(heap_.back());
    heap_.pop_back();
    StreamCursor& c = cursors_[head.cursor];
    Taken taken{.entry = c.head(), .cursor = head.cursor, .position = std::move(head.position)};
    c.advance();
    return taken;
  }
  const StreamCursor& cursor(size_t i) const { return cursors_[i]; }
  // Puts the stream back with its next head, if it has one.
  void push(size_t i) {
    if (cursors_[i].done()) return;
    heap_.push_back(Head{.cursor = i, .position = position_of(i)});
    std::push_heap(heap_.begin(), heap_.end(), later_);
  }
  // Skips the stream's entries that come before `position` in the order, then puts it back.
  void push_after(size_t i, const QueuePosition& position) {
    while (!cursors_[i].done() && scheduler_.queue_before(position_of(i), position)) {
      cursors_[i].advance();
    }
    push(i);
  }

 private:
  struct Head {
    size_t cursor;
    QueuePosition position;
  };

  QueuePosition position_of(size_t i) {
    const StreamCursor& c = cursors_[i];
    return QueuePosition{.priority = c.stream->priority,
                         .weighted_share = shares_.of(c.stream->tenant_id),
                         .created_ms = c.head().created_ms,
                         .key = c.head().key};
  }

  const Scheduler& scheduler_;
  WeightedShares shares_;
  std::deque<QueueStream> added_streams_;  // Streams only this command's entries are in.
  std::vector<StreamCursor> cursors_;
  std::vector<Head> heap_;
  // The heap's order: the least position on top.
  struct Later {
    const Scheduler* scheduler;
    bool operator()(const Head& a, const Head& b) const {
      return scheduler->queue_before(b.position, a.position);
    }
  };
  Later later_{&scheduler_};
};

// A stream the rules hold back, or whose head found no room: its other entries get the reason
// its head was given, where it changed (so that each learns it once) and for those this command
// queued.
void hold_back(Draft& draft, StreamCursor cursor, const std::string& head_id,
               const std::string& reason_before) {
  const std::string why = draft.instance(head_id)->reason;
  auto tell = [&](const std::string& id) {
    if (draft.instance(id)->state == InstanceState::kQueued) set_reason(draft, id, why);
  };
  if (why != reason_before) {
    for (; !cursor.done(); cursor.advance()) tell(cursor.head().id);
  } else {
    for (size_t i = cursor.next_added; i < cursor.added.size(); ++i) tell(cursor.added[i].id);
  }
}

}  // namespace

std::vector<std::string> queue_order(const Draft& draft, const Scheduler& scheduler, size_t limit) {
  QueueMerge queue(draft, scheduler);
  std::vector<std::string> out;
  while (!queue.empty() && out.size() < limit) {
    const QueueMerge::Taken taken = queue.take();
    if (draft.instance(taken.entry.id)->state == InstanceState::kQueued) {
      out.push_back(taken.entry.id);
    }
    queue.push(taken.cursor);
  }
  return out;
}

void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing) {
  QueueMerge queue(draft, placing.scheduler);
  bool head_blocked = false;
  bool head_starving = false;
  size_t backfilled = 0;
  // Placements only take room, so within one pass a request shape that found none finds none
  // again (until a preemption frees some): a long queue of alike requests costs one try.
  FailedShapes failed;
  // Streams the rules held back in this pass; a preemption may change the rules' answer, so they
  // come back after one, from where the pass has got to.
  std::vector<size_t> held_back;
  while (!queue.empty()) {
    const auto [entry, at, position] = queue.take();
    const std::string& id = entry.id;
    const Instance* instance = draft.instance(id);
    if (instance->state != InstanceState::kQueued || instance->gang_rank != 0) {
      queue.push(at);
      continue;
    }
    if (head_blocked && (head_starving || backfilled >= placing.options.max_backfill)) break;
    const TimeMs waited_ms = now_ms - instance->created_at_ms;
    const std::string reason_before = instance->reason;
    const size_t preemptions = failed.preemptions;
    const Outcome outcome = try_place(draft, id, now_ms, placing, &failed);
    if (failed.preemptions != preemptions) {
      for (size_t stream : held_back) queue.push_after(stream, position);
      held_back.clear();
    }
    // Work that the rules hold back blocks nobody: it waits for its own tenant's usage to fall,
    // and so does the rest of its stream, which asks the same of the same rules.
    if (outcome == Outcome::kNotAdmitted) {
      hold_back(draft, queue.cursor(at), id, reason_before);
      held_back.push_back(at);
      continue;
    }
    if (head_blocked) {
      ++backfilled;
    } else if (outcome == Outcome::kNoRoom) {
      head_blocked = true;
      head_starving = waited_ms >= placing.options.starvation_ms;
    }
    // The rest of a stream that found no room asks for the same room and would find none either:
    // it waits with the same reason, without each of its entries taking a try (and a place in the
    // backfill) from the work of other streams behind it.
    if (outcome == Outcome::kNoRoom) {
      hold_back(draft, queue.cursor(at), id, reason_before);
      held_back.push_back(at);
      continue;
    }
    queue.push(at);
  }
}

}  // namespace allot
