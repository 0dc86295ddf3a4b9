// Internals shared by the plugins, the policies and the Placer: requests and nodes compiled into
// flat numbers (model names interned, healthy GPUs in fixed arrays) so that the hot loop does no
// string work and no allocation. Not part of the public API.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/sched.h"

namespace allot::sched::internal {

// A node with more GPUs than this fails the resources filter: the fixed arrays below keep a node's
// facts free of allocation, and no server sold today carries more than 16.
inline constexpr int kMaxGpus = 64;
inline constexpr int kWholeMilli = 1000;

// GPU models seen on nodes, interned so that a request's model check is an array lookup.
class ModelTable {
 public:
  int intern(std::string_view model);
  size_t size() const { return names_.size(); }
  const std::string& name(int id) const { return names_[static_cast<size_t>(id)]; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> ids_;
};

// Whether a model list (empty: any) allows a GPU model.
bool models_allow(const std::vector<std::string>& models, std::string_view gpu_model);

// A request as numbers. `milli` is set for a share of one GPU, `gpus` for whole GPUs.
struct Need {
  int gpus = 0;
  int milli = 0;
  int64_t cpu = 0;
  int64_t mem = 0;
  bool gpu() const { return gpus > 0 || milli > 0; }
  // The largest free milli a GPU may have and still be useless to this need.
  int threshold() const { return milli > 0 ? milli : kWholeMilli; }
};
// GPU milli a need takes in all: whole GPUs count 1000 each.
inline int64_t gpu_milli(const Need& need) {
  return need.milli > 0 ? need.milli : int64_t{kWholeMilli} * need.gpus;
}
Need need_of(const Request& request);

// A request shape as typical_shapes counts it: whole GPUs, share milli, models and CPU milli.
using ShapeKey = std::tuple<int, int, std::vector<std::string>, int64_t>;
ShapeKey shape_key(const Request& request);
// One shape of a workload: its first request, how many ask it, and the position of its first
// appearance.
struct ShapeCount {
  Request shape;
  size_t count = 0;
  size_t first = 0;
};
// typical_shapes' step after counting: the most frequent shapes (ties by first appearance)
// covering `coverage` of the requests, region and memory cleared, weighted by frequency.
std::vector<std::pair<Request, double>> rank_shapes(std::vector<ShapeCount> shapes,
                                                    double coverage);

// The schedulable part of a node: its healthy GPUs, in index order.
struct NodeFacts {
  int64_t free_cpu = 0;
  int64_t free_mem = 0;
  int64_t cap_cpu = 0;
  int64_t cap_mem = 0;
  int count = 0;          // Healthy GPUs.
  int all_gpus = 0;       // All GPUs, healthy or not.
  int common_model = -1;  // The model id of every healthy GPU, or -1 when they differ or none.
  int total_free = 0;
  int full = 0;  // Healthy GPUs wholly free.
  int max_free = 0;
  std::array<int16_t, kMaxGpus> slot{};  // Position in NodeView::gpus.
  std::array<int16_t, kMaxGpus> free{};
  std::array<int32_t, kMaxGpus> model{};
};
NodeFacts facts_of(const NodeView& node, ModelTable& models);
// Recomputes the sums (total_free, full, max_free) after `free` changed.
void resum(NodeFacts& facts);

// GPUs chosen, as a bit set over NodeFacts positions (healthy GPUs in index order).
using Pick = uint64_t;
std::vector<int> pick_indices(const NodeView& node, const NodeFacts& facts, Pick pick);

// A request compiled against a ModelTable.
struct CompiledRequest {
  const Request* request = nullptr;
  Need need;
  std::vector<uint8_t> model_ok;  // Per model id.
};
CompiledRequest compile(const Request& request, const ModelTable& models);

// The typical shapes as parallel arrays, with each shape's model check per model id, and the
// distinct GPU thresholds so that a node's "free milli below threshold" sums are computed once
// per threshold rather than once per shape.
struct ShapeTable {
  std::vector<Need> need;
  std::vector<double> weight;
  std::vector<int> threshold_of;         // Index into thresholds.
  std::vector<int> thresholds;           // Distinct, ascending.
  std::vector<std::vector<uint8_t>> ok;  // [model id][shape].
  std::vector<bool> any_model;
  // CPU milli per GPU milli over the GPU shapes, frequency-weighted: what a GPU milli typically
  // needs beside it (0 when no shape needs a GPU).
  double cpu_per_milli = 0;
  // CPU milli per GPU milli that all the shapes ask for, CPU-only ones included, over the GPU
  // shapes' milli: what the typical work needs of the nodes' CPU for each GPU milli it uses.
  double demand_cpu_per_milli = 0;
  // Whether that is more than the nodes have per healthy GPU milli: CPU, not GPUs, runs out first
  // (cpu_bound in frag.h). False until make_env sets it from the nodes' capacity.
  bool cpu_bound = false;
  // Per model id: the load that shapes naming models put on it, relative to the average load (see
  // model_pressure in frag.h). Empty until make_env fills it from the nodes' capacity.
  std::vector<double> pressure;
};
ShapeTable compile_shapes(const CycleState& cycle, const ModelTable& models);

// Everything a score plugin may read beyond the node itself. `frag_cache` (optional) holds each
// node's current fragmentation, so that only changed nodes are recomputed.
struct Env {
  const CycleState* cycle = nullptr;
  ModelTable models;
  ShapeTable shapes;
  std::vector<double>* frag_cache = nullptr;  // NaN: not computed.
  // Per node: its region's effective carbon intensity (region_carbon in plugins.h).
  std::vector<double> carbon;
  // Per node: its region, for the preference plugin.
  std::vector<std::string> region;
};

// Healthy, model-allowed GPU positions of a node for a request.
inline bool usable(const NodeFacts& facts, const CompiledRequest& request, int i) {
  return request.model_ok[static_cast<size_t>(facts.model[static_cast<size_t>(i)])] != 0;
}

}  // namespace allot::sched::internal
