#include "core/pools/demand.h"

#include <algorithm>
#include <cmath>

#include "core/kernel/gpu_models.h"

namespace allot {

bool demands_model(const Instance& instance, const std::string& model) {
  const auto& models = instance.spec.gpu_models;
  return models.empty() || std::any_of(models.begin(), models.end(), [&](const std::string& m) {
           return gpu_model_matches(m, model);
         });
}

std::vector<double> hourly_demand(const State& state, const std::string& model, TimeMs from_ms,
                                  int hours, TimeMs now_ms) {
  std::vector<int64_t> milli_ms(static_cast<size_t>(std::max(hours, 0)), 0);
  const TimeMs to_ms = from_ms + (int64_t{hours} * kHourMs);
  for (const auto& [id, instance] : state.instances) {
    const TimeMs begin = std::max(instance.created_at_ms, from_ms);
    const TimeMs end = std::min(is_final(instance.state) ? instance.ended_at_ms : now_ms, to_ms);
    if (end <= begin || !demands_model(instance, model)) continue;
    const int64_t milli =
        ((int64_t{instance.spec.gpus} * 1000) + instance.spec.gpu_milli) * instance.spec.nodes;
    for (TimeMs t = begin; t < end;) {
      const auto hour = static_cast<size_t>((t - from_ms) / kHourMs);
      const TimeMs hour_end = from_ms + ((static_cast<int64_t>(hour) + 1) * kHourMs);
      const TimeMs until = std::min(end, hour_end);
      milli_ms[hour] += milli * (until - t);
      t = until;
    }
  }
  std::vector<double> out;
  out.reserve(milli_ms.size());
  for (int64_t v : milli_ms) {
    out.push_back(static_cast<double>(v) / 1000.0 / static_cast<double>(kHourMs));
  }
  return out;
}

std::map<std::string, int> standing_gpus(const State& state) {
  std::map<std::string, int> gpus;
  for (const auto& [id, node] : state.nodes) {
    if (node.labels.contains("pool") || node.lost) continue;
    for (const Gpu& gpu : node.gpus) ++gpus[gpu.model];
  }
  return gpus;
}

std::map<std::string, int> forecast_pool_targets(const State& state,
                                                 const std::map<std::string, double>& peak_gpus,
                                                 const std::map<std::string, int>& standing) {
  std::map<std::string, int> targets;
  for (const auto& [model, peak] : peak_gpus) {
    const auto fixed = standing.find(model);
    double remaining = peak - (fixed == standing.end() ? 0 : fixed->second);
    std::vector<const Pool*> pools;
    for (const auto& [id, pool] : state.pools) {
      if (!pool.deleted() && pool.gpu_model == model) pools.push_back(&pool);
    }
    std::sort(pools.begin(), pools.end(),
              [](const Pool* a, const Pool* b) { return a->name < b->name; });
    for (const Pool* pool : pools) {
      const double wanted = std::ceil(std::max(0.0, remaining) / pool->gpus_per_node);
      const int nodes = std::min(pool->max_nodes, static_cast<int>(wanted));
      targets[pool->id] = nodes;
      remaining -= static_cast<double>(nodes) * pool->gpus_per_node;
    }
  }
  return targets;
}

TimeMs first_demand_ms(const State& state) {
  TimeMs first = 0;
  for (const auto& [id, instance] : state.instances) {
    if (first == 0 || instance.created_at_ms < first) first = instance.created_at_ms;
  }
  return first;
}

}  // namespace allot
