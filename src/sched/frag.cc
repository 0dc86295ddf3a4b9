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

double cpu_stranded(const ShapeTable& shapes, const NodeFacts& facts) {
  if (shapes.cpu_per_milli <= 0) return 0;
  const double fed =
      static_cast<double>(std::max<int64_t>(0, facts.free_cpu)) / shapes.cpu_per_milli;
  return std::max(0.0, facts.total_free - fed);
}

bool cpu_bound(const ShapeTable& shapes, const std::vector<NodeFacts>& facts) {
  double cpu = 0;
  double milli = 0;
  for (const NodeFacts& f : facts) {
    cpu += static_cast<double>(f.cap_cpu);
    milli += kWholeMilli * static_cast<double>(f.count);
  }
  return milli > 0 && shapes.demand_cpu_per_milli * milli > cpu;
}

std::vector<double> model_pressure(const ShapeTable& shapes, const std::vector<NodeFacts>& facts,
                                   size_t model_count) {
  std::vector<double> capacity(model_count, 0.0);
  double total = 0;
  for (const NodeFacts& f : facts) {
    for (int i = 0; i < f.count; ++i)
      capacity[static_cast<size_t>(f.model[static_cast<size_t>(i)])] += kWholeMilli;
    total += kWholeMilli * static_cast<double>(f.count);
  }
  std::vector<double> pressure(model_count, 0.0);
  double demand = 0;
  for (size_t s = 0; s < shapes.need.size(); ++s) {
    const double d = shapes.weight[s] * static_cast<double>(gpu_milli(shapes.need[s]));
    demand += d;
    if (shapes.any_model[s] || d <= 0) continue;
    double accepted = 0;
    for (size_t m = 0; m < model_count; ++m) accepted += shapes.ok[m][s] != 0 ? capacity[m] : 0;
    if (accepted <= 0) continue;
    for (size_t m = 0; m < model_count; ++m) {
      if (shapes.ok[m][s] != 0) pressure[m] += d / accepted;
    }
  }
  const double average = total > 0 ? demand / total : 0;
  for (double& p : pressure) p = average > 0 ? p / average : 0;
  return pressure;
}

namespace {

// GPU milli the picked GPUs take, each times its model's pressure.
double pressure_charge(const ShapeTable& shapes, const Need& need, const NodeFacts& facts,
                       Pick pick) {
  if (shapes.pressure.empty()) return 0;
  const int per_gpu = need.milli > 0 ? need.milli : kWholeMilli;
  double charge = 0;
  for (int i = 0; i < facts.count; ++i) {
    if (((pick >> i) & 1U) == 0) continue;
    charge += per_gpu * shapes.pressure[static_cast<size_t>(facts.model[static_cast<size_t>(i)])];
  }
  return charge;
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
  const double strand_weight =
      shapes.cpu_bound ? options.cpu_bound_strand_weight : options.cpu_strand_weight;
  const double stranded_before = strand_weight > 0 ? cpu_stranded(shapes, facts) : 0.0;
  auto consider = [&](Pick p) {
    const NodeFacts after = after_pick(facts, need, p);
    double fall = before - node_frag(shapes, after);
    if (strand_weight > 0) {
      fall -= strand_weight * (cpu_stranded(shapes, after) - stranded_before);
    }
    if (options.model_pressure_weight > 0) {
      fall -= options.model_pressure_weight * pressure_charge(shapes, need, facts, p);
    }
    const double score = options.paper_score ? paper_score(fall) : fall;
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
      if (!seen) consider(Pick{1} << i);
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
    if (taken == need.gpus) consider(p);
  } else {
    consider(0);
  }
  pick = best_pick;
  return best;
}

}  // namespace allot::sched::internal
