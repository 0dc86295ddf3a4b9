#include "sched/core_scheduler.h"

#include <algorithm>
#include <iterator>

#include "core/regions/regions.h"
#include "sched/internal.h"

namespace allot::sched {

NodeView view_of(const Node& node) {
  NodeView view{.id = node.id,
                .region = node.region,
                .labels = node.labels,
                .cpu_milli = node.cpu_milli,
                .memory_mib = node.memory_mib,
                .free_cpu_milli = node.cpu_milli - node.used_cpu_milli,
                .free_memory_mib = node.memory_mib - node.used_memory_mib};
  view.gpus.reserve(node.gpus.size());
  for (const Gpu& gpu : node.gpus) {
    view.gpus.push_back(GpuSlot{.index = gpu.index,
                                .model = gpu.model,
                                .free_milli = 1000 - gpu.used_milli,
                                .healthy = gpu.healthy});
  }
  return view;
}

bool same_view(const Node& node, const NodeView& view) {
  if (view.free_cpu_milli != node.cpu_milli - node.used_cpu_milli ||
      view.free_memory_mib != node.memory_mib - node.used_memory_mib ||
      view.cpu_milli != node.cpu_milli || view.memory_mib != node.memory_mib ||
      view.gpus.size() != node.gpus.size() || view.region != node.region ||
      view.labels != node.labels) {
    return false;
  }
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& gpu = node.gpus[i];
    const GpuSlot& slot = view.gpus[i];
    if (slot.free_milli != 1000 - gpu.used_milli || slot.healthy != gpu.healthy ||
        slot.index != gpu.index || slot.model != gpu.model) {
      return false;
    }
  }
  return view.id == node.id;
}

Request request_of(const InstanceSpec& spec) {
  return Request{.gpus = spec.gpus,
                 .gpu_milli = spec.gpu_milli,
                 .models = spec.gpu_models,
                 .cpu_milli = spec.cpu_milli,
                 .memory_mib = spec.memory_mib,
                 .region = spec.region};
}

std::map<std::string, double> carbon_by_region(const Books& books, TimeMs at_ms) {
  std::map<std::string, double> out;
  for (const auto& [region, site] : books.sites) {
    // The step in force: the last one starting at or before `at_ms` (steps are sorted by start).
    // This is value_at's rule, but a region with no step yet is left out rather than read as 0,
    // which would make it look carbon-free.
    const auto& steps = site.carbon_g_per_kwh;
    const auto after = std::ranges::upper_bound(steps, at_ms, {}, &RatePoint::from_ms);
    if (after == steps.begin()) continue;
    // PUE below 1.0 cannot happen (a facility uses at least its IT energy); reading a bad figure
    // as 1.0 keeps one site's typo from making it look cleaner than its grid.
    const int64_t pue_milli = std::max<int64_t>(site.pue_milli, 1000);
    out.emplace(region, static_cast<double>(std::prev(after)->value) *
                            static_cast<double>(pue_milli) / 1000.0);
  }
  return out;
}

std::map<std::pair<std::string, std::string>, int> preference_ranks(const State& state,
                                                                    const InstanceSpec& spec,
                                                                    TimeMs at_ms) {
  std::map<std::pair<std::string, std::string>, int> out;
  if (spec.prefer == Prefer::kNone) return out;
  std::vector<QuoteOption> options = quote_options(state, spec, at_ms);
  // Whether a node has room is the filters' business: rank every option as if it had.
  for (QuoteOption& option : options) option.fits = true;
  const Quote quote = rank_quote(std::move(options), wishes_of(spec));
  for (const RankedOption& ranked : quote.ranked) {
    out.emplace(std::make_pair(ranked.option.region, ranked.option.gpu_model), ranked.rank - 1);
  }
  return out;
}

// The core does not pass the command's time to the scheduler (Scheduler::place takes only the
// draft), so the time is the latest the draft knows of. Nodes that take work have been heard from
// within heartbeat_timeout_ms and report every couple of seconds, and a new instance was created
// at the command's own time, so this trails the real moment by seconds, while grid intensity
// series step by the hour or the quarter hour.
TimeMs placement_time(const Draft& draft, const Instance& instance) {
  TimeMs latest = instance.created_at_ms;
  draft.for_each_node([&](const Node& node) { latest = std::max(latest, node.last_heartbeat_ms); });
  return latest;
}

namespace {

// typical_shapes (facts.cc) over the state's active instances in id order and then `request`,
// from the state's index of active work by shape: the same groups, counts, order and weights.
std::vector<std::pair<Request, double>> typical_of(const State& state, const Request& request) {
  struct Group {
    internal::ShapeCount count;
    const std::string* first = nullptr;  // Its least instance id; null: only the request.
  };
  std::map<internal::ShapeKey, Group> groups;
  for (const auto& [shape, ids] : state.active_by_shape) {
    const auto& [gpus, gpu_milli, models, cpu_milli] = shape;
    const Request r{.gpus = gpus, .gpu_milli = gpu_milli, .models = models, .cpu_milli = cpu_milli};
    Group& group = groups[internal::shape_key(r)];
    group.count.count += ids.size();
    if (group.first == nullptr || *ids.begin() < *group.first) {
      group.first = &*ids.begin();
      group.count.shape = r;
    }
  }
  Group& own = groups[internal::shape_key(request)];
  if (own.count.count++ == 0) own.count.shape = request;
  // First appearance in id order, the request's own shape after every instance.
  std::vector<Group*> order;
  order.reserve(groups.size());
  for (auto& [key, group] : groups) order.push_back(&group);
  std::ranges::sort(order, [](const Group* a, const Group* b) {
    if (a->first == nullptr || b->first == nullptr)
      return b->first == nullptr && a->first != nullptr;
    return *a->first < *b->first;
  });
  std::vector<internal::ShapeCount> shapes;
  shapes.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i]->count.first = i;
    shapes.push_back(std::move(order[i]->count));
  }
  return internal::rank_shapes(std::move(shapes), 0.95);
}

bool same_cycle(const CycleState& a, const CycleState& b) {
  return a.typical == b.typical && a.carbon_g_per_kwh == b.carbon_g_per_kwh &&
         a.preference_rank == b.preference_rank;
}

}  // namespace

CycleState cycle_for(const Draft& draft, const Instance& instance) {
  CycleState cycle;
  cycle.typical = typical_of(draft.base(), request_of(instance.spec));
  // Without sites and without a preference nothing is looked up at a time, and finding the
  // time walks every node.
  if (!draft.base().books.sites.empty() || instance.spec.prefer != Prefer::kNone) {
    const TimeMs at_ms = placement_time(draft, instance);
    cycle.carbon_g_per_kwh = carbon_by_region(draft.base().books, at_ms);
    cycle.preference_rank = preference_ranks(draft.base(), instance.spec, at_ms);
  }
  return cycle;
}

namespace {

// The policy asked over the views of the draft's nodes that take work and that `only` lets
// through, with `cycle`.
std::optional<Placement> place_over(const Policy& policy, const CycleState& cycle,
                                    const Draft& draft, const Instance& instance,
                                    const NodeFilter& only, std::string& why) {
  std::vector<NodeView> views;
  draft.for_each_node([&](const Node& node) {
    if (node_takes_work(node) && (!only || only(node))) views.push_back(view_of(node));
  });
  if (views.empty()) {
    why = "no node is ready to take work";
    return std::nullopt;
  }
  auto choice = policy.place(cycle, request_of(instance.spec), views, why);
  if (!choice) return std::nullopt;
  return Placement{views[choice->node].id, choice->gpus};
}

}  // namespace

std::optional<Placement> place_afresh(const Policy& policy, const Draft& draft,
                                      const Instance& instance, const NodeFilter& only,
                                      std::string& why) {
  std::vector<Request> workload;
  for (const auto& [id, other] : draft.base().instances) {
    if (!is_final(other.state)) workload.push_back(request_of(other.spec));
  }
  workload.push_back(request_of(instance.spec));
  CycleState cycle = typical_shapes(workload);
  const TimeMs at_ms = placement_time(draft, instance);
  cycle.carbon_g_per_kwh = carbon_by_region(draft.base().books, at_ms);
  cycle.preference_rank = preference_ranks(draft.base(), instance.spec, at_ms);
  return place_over(policy, cycle, draft, instance, only, why);
}

PolicyScheduler::PolicyScheduler(std::unique_ptr<Policy> policy) : policy_(std::move(policy)) {}

PolicyScheduler::~PolicyScheduler() = default;

Placer& PolicyScheduler::synced(const Draft& draft) const {
  // The nodes that take work, in id order, against the Placer's: the same list, each view
  // compared in place; any other list, a new Placer.
  std::vector<const Node*> taking;
  taking.reserve(placer_ ? placer_->nodes().size() : 0);
  draft.for_each_node([&](const Node& node) {
    if (node_takes_work(node)) taking.push_back(&node);
  });
  const bool same_nodes =
      placer_ && std::ranges::equal(taking, placer_->nodes(),
                                    [](const Node* n, const NodeView& v) { return n->id == v.id; });
  if (!same_nodes) {
    std::vector<NodeView> views;
    views.reserve(taking.size());
    for (const Node* node : taking) views.push_back(view_of(*node));
    placer_ = std::make_unique<Placer>(*policy_, CycleState{}, std::move(views));
    return *placer_;
  }
  for (size_t i = 0; i < taking.size(); ++i) {
    if (!same_view(*taking[i], placer_->nodes()[i])) placer_->update(i, view_of(*taking[i]));
  }
  return *placer_;
}

std::optional<Placement> PolicyScheduler::place(const Draft& draft, const Instance& instance,
                                                const NodeFilter& only, std::string& why) const {
  std::lock_guard lock(mutex_);
  Placer& placer = synced(draft);
  if (placer.nodes().empty()) {
    why = "no node is ready to take work";
    return std::nullopt;
  }
  CycleState cycle = cycle_for(draft, instance);
  if (!same_cycle(cycle, placer.cycle())) placer.set_cycle(std::move(cycle));
  auto choice = placer.place(request_of(instance.spec), why);
  auto allowed = [&](const NodeView& view) { return !only || only(*draft.node(view.id)); };
  // The best of all nodes is the best of those `only` lets through when it is one of them (ties
  // go to the first in id order either way).
  if (choice && allowed(placer.nodes()[choice->node])) {
    return Placement{placer.nodes()[choice->node].id, choice->gpus};
  }
  // When nothing fits, nothing fits among fewer nodes either, and the placer's reason is the
  // policy's when `only` refuses none of them. Otherwise the policy is asked over the nodes that
  // `only` lets through alone.
  if (!choice && std::ranges::all_of(placer.nodes(), allowed)) return std::nullopt;
  return place_over(*policy_, placer.cycle(), draft, instance, only, why);
}

bool PolicyScheduler::queue_before(const QueuePosition& a, const QueuePosition& b) const {
  auto queued = [](const QueuePosition& p) {
    return QueuedRequest{.priority = p.priority,
                         .weighted_share = p.weighted_share,
                         .created_ms = p.created_ms,
                         .id = p.key};
  };
  return policy_->queue_sort().less(queued(a), queued(b));
}

}  // namespace allot::sched
