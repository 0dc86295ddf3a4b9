#include "sched/frag.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace allot::sched::internal {
namespace {

bool fits_resources(const Need& need, const NodeFacts& facts) {
  return need.cpu <= facts.free_cpu && need.mem <= facts.free_mem;
}

// The fast path for the usual node whose healthy GPUs are all one model: the "free below
// threshold" sums are computed once per distinct threshold, then each shape costs O(1).
double homogeneous_frag(const ShapeTable& t, const NodeFacts& facts) {
  std::array<int32_t, kWholeMilli + 1> partial;  // NOLINT: filled below for the thresholds used.
  const size_t n_thresholds = std::min(t.thresholds.size(), partial.size());
  for (size_t k = 0; k < n_thresholds; ++k) {
    const int thr = t.thresholds[k];
    int32_t sum = 0;
    for (int i = 0; i < facts.count; ++i) {
      const int f = facts.free[static_cast<size_t>(i)];
      sum += f < thr ? f : 0;
    }
    partial[k] = sum;
  }
  const std::vector<uint8_t>& ok = t.ok[static_cast<size_t>(facts.common_model)];
  const double total = facts.total_free;
  double frag = 0;
  for (size_t s = 0; s < t.need.size(); ++s) {
    const Need& n = t.need[s];
    const bool gpu_fits = n.milli > 0 ? facts.max_free >= n.milli : facts.full >= n.gpus;
    const bool fits = n.gpu() && ok[s] != 0 && fits_resources(n, facts) && gpu_fits;
    frag += t.weight[s] * (fits ? partial[static_cast<size_t>(t.threshold_of[s])] : total);
  }
  return frag;
}

}  // namespace

double shape_frag(const ShapeTable& t, size_t shape, const NodeFacts& facts) {
  const Need& n = t.need[shape];
  if (!n.gpu() || !fits_resources(n, facts)) return facts.total_free;
  const int thr = n.threshold();
  int usable_full = 0;
  int usable_max = 0;
  int frag = 0;
  for (int i = 0; i < facts.count; ++i) {
    const auto pos = static_cast<size_t>(i);
    const int f = facts.free[pos];
    if (t.ok[static_cast<size_t>(facts.model[pos])][shape] == 0) {
      frag += f;  // A GPU of a model the shape refuses is all fragment to it.
      continue;
    }
    usable_full += f == kWholeMilli ? 1 : 0;
    usable_max = std::max(usable_max, f);
    frag += f < thr ? f : 0;
  }
  const bool fits = n.milli > 0 ? usable_max >= n.milli : usable_full >= n.gpus;
  return fits ? frag : facts.total_free;
}

double node_frag(const ShapeTable& t, const NodeFacts& facts) {
  if (facts.total_free == 0) return 0;
  if (facts.common_model >= 0) return homogeneous_frag(t, facts);
  double frag = 0;
  for (size_t s = 0; s < t.need.size(); ++s) frag += t.weight[s] * shape_frag(t, s, facts);
  return frag;
}

NodeFacts after_pick(const NodeFacts& facts, const Need& need, Pick pick) {
  NodeFacts after = facts;
  after.free_cpu -= need.cpu;
  after.free_mem -= need.mem;
  const int per_gpu = need.milli > 0 ? need.milli : kWholeMilli;
  for (int i = 0; i < after.count; ++i) {
    if ((pick >> i) & 1U) {
      auto& f = after.free[static_cast<size_t>(i)];
      f = static_cast<int16_t>(f - per_gpu);
    }
  }
  resum(after);
  return after;
}

namespace {

// Allot's terms beyond the fragmentation delta, for a candidate whose result is `after` and
// whose share went to a GPU left with `gpu_left` milli (-1 for whole GPUs).
double extras(const ShapeTable& t, const CompiledRequest& request, const NodeFacts& after,
              int gpu_left, const FragOptions& o) {
  double bonus = 0;
  if (o.pack_weight > 0) {
    // Fewer free milli left on the node (and on the chosen GPU) is better: it keeps empty GPUs and
    // empty nodes whole for the work that needs them.
    bonus -= o.pack_weight * (after.total_free + (gpu_left > 0 ? gpu_left : 0));
  }
  if (o.cpu_weight > 0 && after.count > 0) {
    // GPUs left free on a node whose CPU or memory is nearly gone are stranded; charge the share
    // of free GPU milli that the remaining CPU and memory can no longer feed.
    const double cpu_left = static_cast<double>(after.free_cpu) /
                            static_cast<double>(std::max<int64_t>(1, after.cap_cpu));
    const double mem_left = static_cast<double>(after.free_mem) /
                            static_cast<double>(std::max<int64_t>(1, after.cap_mem));
    const double gpu_left_ratio =
        after.total_free / (kWholeMilli * static_cast<double>(after.count));
    const double starved = std::max(0.0, gpu_left_ratio - std::min(cpu_left, mem_left));
    bonus -= o.cpu_weight * starved * after.total_free;
  }
  if (o.model_weight > 0 && request.request->models.empty() && after.common_model >= 0 &&
      !t.constrained_demand.empty()) {
    bonus -= o.model_weight * t.constrained_demand[static_cast<size_t>(after.common_model)] *
             kWholeMilli;
  }
  return bonus;
}

}  // namespace

double paper_score(double fall_milli) {
  return std::floor(100.0 / (1.0 + std::exp(-fall_milli / 1000.0)));
}

double frag_place(const ShapeTable& shapes, const CompiledRequest& request, const NodeFacts& facts,
                  double before, const FragOptions& options, Pick& pick) {
  const Need& need = request.need;
  double best = -std::numeric_limits<double>::infinity();
  Pick best_pick = 0;
  auto consider = [&](Pick p, int gpu_left) {
    const NodeFacts after = after_pick(facts, need, p);
    const double fall = before - node_frag(shapes, after);
    const double score = (options.paper_score ? paper_score(fall) : fall) +
                         extras(shapes, request, after, gpu_left, options);
    if (score > best) {
      best = score;
      best_pick = p;
    }
  };
  if (need.milli > 0) {
    for (int i = 0; i < facts.count; ++i) {
      const auto pos = static_cast<size_t>(i);
      if (!usable(facts, request, i) || facts.free[pos] < need.milli) continue;
      // GPUs with the same free milli and model give the same result; try the first only.
      bool seen = false;
      for (int j = 0; j < i && !seen; ++j) {
        const auto q = static_cast<size_t>(j);
        seen = facts.free[q] == facts.free[pos] && facts.model[q] == facts.model[pos] &&
               usable(facts, request, j);
      }
      if (!seen) consider(Pick{1} << i, facts.free[pos] - need.milli);
    }
  } else if (need.gpus > 0) {
    Pick p = 0;
    int taken = 0;
    for (int i = 0; i < facts.count && taken < need.gpus; ++i) {
      if (usable(facts, request, i) && facts.free[static_cast<size_t>(i)] == kWholeMilli) {
        p |= Pick{1} << i;
        ++taken;
      }
    }
    if (taken == need.gpus) consider(p, -1);
  } else {
    consider(0, -1);
  }
  pick = best_pick;
  return best;
}

}  // namespace allot::sched::internal
