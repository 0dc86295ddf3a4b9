#include <algorithm>
#include <cassert>
#include <map>
#include <tuple>

#include "core/kernel/gpu_models.h"
#include "sched/internal.h"

namespace allot::sched {
namespace internal {

int ModelTable::intern(std::string_view model) {
  auto it = ids_.find(std::string(model));
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(names_.size());
  names_.emplace_back(model);
  ids_.emplace(std::string(model), id);
  return id;
}

bool models_allow(const std::vector<std::string>& models, std::string_view gpu_model) {
  if (models.empty()) return true;
  return std::ranges::any_of(
      models, [&](const std::string& m) { return allot::gpu_model_matches(m, gpu_model); });
}

Need need_of(const Request& request) {
  Need need{.gpus = request.gpus,
            .milli = request.gpu_milli,
            .cpu = request.cpu_milli,
            .mem = request.memory_mib};
  // A "share" of 1000 or more milli is whole GPUs, as the trace writes one whole GPU.
  if (need.gpus == 0 && need.milli >= kWholeMilli) need.gpus = need.milli / kWholeMilli;
  if (need.gpus > 0) need.milli = 0;
  return need;
}

void resum(NodeFacts& facts) {
  facts.total_free = 0;
  facts.full = 0;
  facts.max_free = 0;
  for (int i = 0; i < facts.count; ++i) {
    const int f = facts.free[static_cast<size_t>(i)];
    facts.total_free += f;
    facts.full += f == kWholeMilli ? 1 : 0;
    facts.max_free = std::max(facts.max_free, f);
  }
}

NodeFacts facts_of(const NodeView& node, ModelTable& models) {
  NodeFacts facts;
  facts.free_cpu = node.free_cpu_milli;
  facts.free_mem = node.free_memory_mib;
  facts.cap_cpu = node.cpu_milli;
  facts.cap_mem = node.memory_mib;
  facts.all_gpus = static_cast<int>(node.gpus.size());
  bool same = true;
  for (size_t pos = 0; pos < node.gpus.size() && facts.count < kMaxGpus; ++pos) {
    const GpuSlot& gpu = node.gpus[pos];
    if (!gpu.healthy) continue;
    const auto i = static_cast<size_t>(facts.count++);
    facts.slot[i] = static_cast<int16_t>(pos);
    facts.free[i] = static_cast<int16_t>(std::clamp(gpu.free_milli, 0, kWholeMilli));
    facts.model[i] = models.intern(gpu.model);
    same = same && facts.model[i] == facts.model[0];
  }
  facts.common_model = facts.count > 0 && same ? facts.model[0] : -1;
  resum(facts);
  return facts;
}

std::vector<int> pick_indices(const NodeView& node, const NodeFacts& facts, Pick pick) {
  std::vector<int> out;
  for (int i = 0; i < facts.count; ++i) {
    if ((pick >> i) & 1U) out.push_back(node.gpus[static_cast<size_t>(facts.slot[i])].index);
  }
  return out;
}

CompiledRequest compile(const Request& request, const ModelTable& models) {
  CompiledRequest out{.request = &request, .need = need_of(request), .model_ok = {}};
  out.model_ok.resize(models.size());
  for (size_t id = 0; id < models.size(); ++id) {
    out.model_ok[id] = models_allow(request.models, models.name(static_cast<int>(id))) ? 1 : 0;
  }
  return out;
}

ShapeTable compile_shapes(const CycleState& cycle, const ModelTable& models) {
  ShapeTable t;
  for (const auto& [request, weight] : cycle.typical) {
    t.need.push_back(need_of(request));
    t.weight.push_back(weight);
    t.any_model.push_back(request.models.empty());
    t.thresholds.push_back(t.need.back().threshold());
  }
  std::ranges::sort(t.thresholds);
  t.thresholds.erase(std::unique(t.thresholds.begin(), t.thresholds.end()), t.thresholds.end());
  for (const Need& need : t.need) {
    const auto it = std::ranges::lower_bound(t.thresholds, need.threshold());
    t.threshold_of.push_back(static_cast<int>(it - t.thresholds.begin()));
  }
  t.ok.resize(models.size());
  for (size_t id = 0; id < models.size(); ++id) {
    for (const auto& [request, weight] : cycle.typical) {
      t.ok[id].push_back(models_allow(request.models, models.name(static_cast<int>(id))) ? 1 : 0);
    }
  }
  double cpu = 0;
  double all_cpu = 0;
  double milli = 0;
  for (size_t s = 0; s < t.need.size(); ++s) {
    const double asked = t.weight[s] * static_cast<double>(t.need[s].cpu);
    all_cpu += asked;
    if (!t.need[s].gpu()) continue;
    cpu += asked;
    milli += t.weight[s] * static_cast<double>(gpu_milli(t.need[s]));
  }
  t.cpu_per_milli = milli > 0 ? cpu / milli : 0;
  t.demand_cpu_per_milli = milli > 0 ? all_cpu / milli : 0;
  return t;
}

}  // namespace internal

namespace {

// Applies `sign` (-1 take, +1 give back) of a choice to a node.
void adjust(NodeView& node, const Request& request, const Choice& choice, int sign) {
  const internal::Need need = internal::need_of(request);
  node.free_cpu_milli -= sign * need.cpu;
  node.free_memory_mib -= sign * need.mem;
  const int per_gpu = need.milli > 0 ? need.milli : internal::kWholeMilli;
  for (int index : choice.gpus) {
    // GPU indices are positions in every node Allot builds; search only when they are not.
    auto pos = static_cast<size_t>(index);
    if (pos >= node.gpus.size() || node.gpus[pos].index != index) {
      const auto it = std::ranges::find(node.gpus, index, &GpuSlot::index);
      assert(it != node.gpus.end());
      pos = static_cast<size_t>(it - node.gpus.begin());
    }
    node.gpus[pos].free_milli -= sign * per_gpu;
    assert(node.gpus[pos].free_milli >= 0 && node.gpus[pos].free_milli <= internal::kWholeMilli);
  }
}

}  // namespace

void allocate(NodeView& node, const Request& request, const Choice& choice) {
  adjust(node, request, choice, +1);
}

void release(NodeView& node, const Request& request, const Choice& choice) {
  adjust(node, request, choice, -1);
}

namespace internal {

ShapeKey shape_key(const Request& request) {
  const Need n = need_of(request);
  return ShapeKey{n.gpus, n.milli, request.models, n.cpu};
}

std::vector<std::pair<Request, double>> rank_shapes(std::vector<ShapeCount> shapes,
                                                    double coverage) {
  size_t total = 0;
  for (const ShapeCount& s : shapes) total += s.count;
  // Most frequent first; equal counts in order of first appearance, so the result is stable.
  std::ranges::sort(shapes, [](const ShapeCount& a, const ShapeCount& b) {
    return a.count != b.count ? a.count > b.count : a.first < b.first;
  });
  std::vector<std::pair<Request, double>> typical;
  const auto wanted = coverage * static_cast<double>(total);
  size_t covered = 0;
  for (ShapeCount& s : shapes) {
    if (static_cast<double>(covered) >= wanted && !typical.empty()) break;
    s.shape.region.clear();
    s.shape.memory_mib = 0;
    typical.emplace_back(std::move(s.shape), static_cast<double>(s.count));
    covered += s.count;
  }
  for (auto& entry : typical) entry.second /= static_cast<double>(covered);
  return typical;
}

}  // namespace internal

CycleState typical_shapes(const std::vector<Request>& workload, double coverage) {
  // Memory is not part of a shape: the paper's fragmentation measure looks at GPUs and CPU only,
  // and keying by memory too splits one GPU shape into dozens, pushing the 95 % line far down the
  // tail of rare shapes.
  std::map<internal::ShapeKey, internal::ShapeCount> counts;
  for (size_t i = 0; i < workload.size(); ++i) {
    auto [it, added] = counts.try_emplace(internal::shape_key(workload[i]),
                                          internal::ShapeCount{workload[i], 0, i});
    ++it->second.count;
  }
  std::vector<internal::ShapeCount> shapes;
  shapes.reserve(counts.size());
  for (auto& [key, shape] : counts) shapes.push_back(std::move(shape));
  CycleState cycle;
  cycle.typical = internal::rank_shapes(std::move(shapes), coverage);
  return cycle;
}

}  // namespace allot::sched
