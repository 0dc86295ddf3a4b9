#include "sched/core_scheduler.h"

#include <algorithm>
#include <iterator>

#include "core/regions/regions.h"

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

std::optional<Placement> PolicyScheduler::place(const Draft& draft, const Instance& instance,
                                                const NodeFilter& only, std::string& why) const {
  std::vector<NodeView> views;
  std::vector<Request> workload;
  draft.for_each_node([&](const Node& node) {
    if (node_takes_work(node) && (!only || only(node))) views.push_back(view_of(node));
  });
  if (views.empty()) {
    why = "no node is ready to take work";
    return std::nullopt;
  }
  // The shapes the cluster is asked for: what it runs and what waits, this one included.
  for (const auto& [id, other] : draft.base().instances) {
    if (!is_final(other.state)) workload.push_back(request_of(other.spec));
  }
  workload.push_back(request_of(instance.spec));
  CycleState cycle = typical_shapes(workload);
  const TimeMs at_ms = placement_time(draft, instance);
  cycle.carbon_g_per_kwh = carbon_by_region(draft.base().books, at_ms);
  cycle.preference_rank = preference_ranks(draft.base(), instance.spec, at_ms);
  auto choice = policy_->place(cycle, request_of(instance.spec), views, why);
  if (!choice) return std::nullopt;
  return Placement{views[choice->node].id, choice->gpus};
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
