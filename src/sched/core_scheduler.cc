#include "sched/core_scheduler.h"

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
  auto choice = policy_->place(typical_shapes(workload), request_of(instance.spec), views, why);
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
