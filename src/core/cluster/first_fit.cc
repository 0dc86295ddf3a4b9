#include <algorithm>
#include <tuple>

#include "core/kernel/gpu_models.h"
#include "core/kernel/scheduler.h"

namespace allot {

bool model_allowed(const InstanceSpec& spec, std::string_view gpu_model) {
  if (spec.gpu_models.empty()) return true;
  return std::any_of(spec.gpu_models.begin(), spec.gpu_models.end(),
                     [&](const std::string& m) { return gpu_model_matches(m, gpu_model); });
}

bool region_allowed(const InstanceSpec& spec, std::string_view region) {
  return spec.regions.empty() || std::ranges::find(spec.regions, region) != spec.regions.end();
}

namespace {

class FirstFit final : public Scheduler {
 public:
  std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                 const NodeFilter& only, std::string& why) const override {
    std::optional<Placement> found;
    bool any_node = false;
    draft.for_each_node([&](const Node& node) {
      if (found || !node_takes_work(node) || (only && !only(node))) return;
      any_node = true;
      std::vector<int> gpus = fitting_gpus(node, instance.spec);
      const size_t wanted = instance.spec.gpus > 0 ? static_cast<size_t>(instance.spec.gpus) : 1;
      if (gpus.size() < wanted) return;
      gpus.resize(wanted);
      found = Placement{node.id, std::move(gpus)};
    });
    if (!found) {
      why = any_node ? "no node has enough free GPUs of an allowed model, CPU and memory"
                     : "no node is ready to take work";
    }
    return found;
  }
};

}  // namespace

bool Scheduler::queue_before(const QueuePosition& a, const QueuePosition& b) const {
  return std::tie(a.priority, a.weighted_share, a.created_ms, a.key) <
         std::tie(b.priority, b.weighted_share, b.created_ms, b.key);
}

bool node_takes_work(const Node& node) {
  const NodeState state = node.state();
  return state == NodeState::kReady || state == NodeState::kUnhealthy;
}

std::vector<int> fitting_gpus(const Node& node, const InstanceSpec& spec) {
  std::vector<int> out;
  if (!spec.region.empty() && spec.region != node.region) return out;
  if (node.used_cpu_milli + spec.cpu_milli > node.cpu_milli ||
      node.used_memory_mib + spec.memory_mib > node.memory_mib) {
    return out;
  }
  const int need = spec.gpus > 0 ? 1000 : spec.gpu_milli;
  for (const Gpu& gpu : node.gpus) {
    if (gpu.healthy && model_allowed(spec, gpu.model) && gpu.used_milli + need <= 1000) {
      out.push_back(gpu.index);
    }
  }
  return out;
}

const Scheduler& first_fit_scheduler() {
  static const FirstFit kFirstFit;
  return kFirstFit;
}

}  // namespace allot
