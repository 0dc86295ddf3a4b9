#include <utility>

#include <fmt/format.h>

#include "sched/plugins.h"

namespace allot::sched::internal {

Env make_env(const CycleState& cycle, const std::vector<NodeView>& nodes,
             std::vector<NodeFacts>& facts) {
  Env env;
  env.cycle = &cycle;
  facts.clear();
  facts.reserve(nodes.size());
  for (const NodeView& node : nodes) facts.push_back(facts_of(node, env.models));
  env.carbon.reserve(nodes.size());
  for (const NodeView& node : nodes) env.carbon.push_back(region_carbon(cycle, node.region));
  env.region.reserve(nodes.size());
  for (const NodeView& node : nodes) env.region.push_back(node.region);
  env.shapes = compile_shapes(cycle, env.models);
  env.shapes.pressure = model_pressure(env.shapes, facts, env.models.size());
  env.shapes.cpu_bound = cpu_bound(env.shapes, facts);
  return env;
}

bool Filter::filter(const CycleState& cycle, const Request& request, const NodeView& node,
                    std::string& why) const {
  ModelTable models;
  const NodeFacts facts = facts_of(node, models);
  (void)cycle;
  return check(compile(request, models), node, facts, &why);
}

namespace {

// Says why the node is out, where the caller asks, and returns false for the filter to return.
template <typename... Args>
bool reject(std::string* why, fmt::format_string<Args...> format, Args&&... args) {
  if (why != nullptr) *why = fmt::format(format, std::forward<Args>(args)...);
  return false;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : "|") + item;
  return out;
}

class RegionFilter final : public Filter {
 public:
  std::string_view name() const override { return "region"; }
  bool check(const CompiledRequest& request, const NodeView& node, const NodeFacts& /*facts*/,
             std::string* why) const override {
    const std::string& wanted = request.request->region;
    if (wanted.empty() || wanted == node.region) return true;
    return reject(why, "node is in region {}, not {}", node.region, wanted);
  }
};

// A node whose GPUs are all unhealthy is out for GPU work; single bad GPUs are simply skipped by
// the other plugins, which see healthy GPUs only.
class HealthFilter final : public Filter {
 public:
  std::string_view name() const override { return "health"; }
  bool check(const CompiledRequest& request, const NodeView& /*node*/, const NodeFacts& facts,
             std::string* why) const override {
    if (!request.need.gpu() || facts.all_gpus == 0 || facts.count > 0) return true;
    return reject(why, "all {} GPUs are unhealthy", facts.all_gpus);
  }
};

class ModelFilter final : public Filter {
 public:
  std::string_view name() const override { return "model"; }
  bool check(const CompiledRequest& request, const NodeView& node, const NodeFacts& facts,
             std::string* why) const override {
    if (!request.need.gpu() || request.request->models.empty()) return true;
    for (int i = 0; i < facts.count; ++i) {
      if (usable(facts, request, i)) return true;
    }
    if (why != nullptr) {
      *why = fmt::format("no healthy GPU of model {} (node has {})", join(request.request->models),
                         node.gpus.empty() ? std::string("no GPUs") : node.gpus.front().model);
    }
    return false;
  }
};

class ResourcesFilter final : public Filter {
 public:
  std::string_view name() const override { return "resources"; }
  bool check(const CompiledRequest& request, const NodeView& /*node*/, const NodeFacts& facts,
             std::string* why) const override {
    const Need& n = request.need;
    if (n.cpu > facts.free_cpu) {
      return reject(why, "needs {} CPU milli, {} free", n.cpu, facts.free_cpu);
    }
    if (n.mem > facts.free_mem) {
      return reject(why, "needs {} MiB memory, {} free", n.mem, facts.free_mem);
    }
    if (n.gpu() && facts.all_gpus > kMaxGpus) {
      return reject(why, "node has over {} GPUs", kMaxGpus);
    }
    int full = 0;
    int most = 0;
    for (int i = 0; i < facts.count; ++i) {
      if (!usable(facts, request, i)) continue;
      const int f = facts.free[static_cast<size_t>(i)];
      full += f == kWholeMilli ? 1 : 0;
      most = std::max(most, f);
    }
    if (n.milli > 0 && most < n.milli) {
      return reject(why, "no GPU with {} milli free (most free: {})", n.milli, most);
    }
    if (n.gpus > full) {
      return reject(why, "needs {} whole free GPUs, {} free", n.gpus, full);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Filter> region_filter() { return std::make_unique<RegionFilter>(); }
std::unique_ptr<Filter> health_filter() { return std::make_unique<HealthFilter>(); }
std::unique_ptr<Filter> model_filter() { return std::make_unique<ModelFilter>(); }
std::unique_ptr<Filter> resources_filter() { return std::make_unique<ResourcesFilter>(); }

}  // namespace allot::sched::internal
