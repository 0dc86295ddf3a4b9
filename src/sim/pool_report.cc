#include "sim/pool_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace allot::sim {
namespace {

using nlohmann::json;

// GPU milli x milliseconds as hours, to three decimals.
double gpu_hours(int64_t milli_ms) {
  return std::round(static_cast<double>(milli_ms) / 3'600'000.0) / 1000.0;
}

double hours(int64_t ms) { return std::round(static_cast<double>(ms) / 3'600.0) / 1000.0; }

// The nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, int64_t pct) {
  const auto rank = static_cast<size_t>((static_cast<int64_t>(sorted.size()) * pct + 99) / 100);
  return sorted[std::max<size_t>(rank, 1) - 1];
}

json wait_of(const State& state, const std::function<bool(const Instance&)>& counts) {
  std::vector<int64_t> waits;
  int64_t never = 0;
  for (const auto& [id, i] : state.instances) {
    if (!counts(i)) continue;
    if (i.started_at_ms == 0) {
      ++never;
      continue;
    }
    waits.push_back((i.started_at_ms - i.created_at_ms) / 1000);
  }
  std::sort(waits.begin(), waits.end());
  int64_t sum = 0;
  for (int64_t w : waits) sum += w;
  const bool any = !waits.empty();
  return {
      {"started", waits.size()},
      {"never_started", never},
      {"mean_s",
       any ? std::round(static_cast<double>(sum) * 10.0 / static_cast<double>(waits.size())) / 10.0
           : 0.0},
      {"p50_s", any ? percentile(waits, 50) : 0},
      {"p95_s", any ? percentile(waits, 95) : 0},
      {"max_s", any ? waits.back() : 0}};
}

json one_pool(const State& state, const Pool& pool, TimeMs end_ms) {
  int64_t launched = 0;
  int64_t retired = 0;
  int64_t live = 0;
  int64_t node_ms = 0;
  int64_t available = 0;  // GPU milli x ms
  std::set<std::string> nodes;
  for (const auto& [id, pn] : state.pool_nodes) {
    if (pn.pool_id != pool.id) continue;
    ++launched;
    if (pn.retired_at_ms != 0) ++retired;
    if (pn.live()) ++live;
    const TimeMs gone = pn.ended_at_ms != 0 ? std::min(pn.ended_at_ms, end_ms) : end_ms;
    node_ms += gone - pn.requested_at_ms;
    const Node* node = pn.node_id.empty() ? nullptr : state.node(pn.node_id);
    if (node == nullptr) continue;
    nodes.insert(node->id);
    available += int64_t{1000} * static_cast<int64_t>(node->gpus.size()) * (gone - pn.joined_at_ms);
  }
  int64_t allocated = 0;
  for (const auto& [id, i] : state.instances) {
    if (i.started_at_ms == 0 || !nodes.contains(i.node_id)) continue;
    const TimeMs end = i.ended_at_ms != 0 ? std::min(i.ended_at_ms, end_ms) : end_ms;
    allocated += int64_t{i.milli_per_gpu()} * static_cast<int64_t>(i.gpu_indices.size()) *
                 (end - i.started_at_ms);
  }
  return {
      {"name", pool.name},
      {"model", pool.gpu_model},
      {"min", pool.min_nodes},
      {"max", pool.max_nodes},
      {"launched", launched},
      {"retired", retired},
      {"boot_failures", pool.boot_failures},
      {"nodes_at_end", live},
      {"node_hours", hours(node_ms)},
      {"gpu_hours_available", gpu_hours(available)},
      {"gpu_hours_allocated", gpu_hours(allocated)},
      {"gpu_idle_hours", gpu_hours(available - allocated)},
      {"queue_wait", wait_of(state, [&](const Instance& i) { return nodes.contains(i.node_id); })}};
}

}  // namespace

json pool_report(const State& state, TimeMs end_ms) {
  std::vector<const Pool*> pools;
  pools.reserve(state.pools.size());
  for (const auto& [id, pool] : state.pools) pools.push_back(&pool);
  std::sort(pools.begin(), pools.end(),
            [](const Pool* a, const Pool* b) { return a->name < b->name; });
  json out = json::array();
  for (const Pool* pool : pools) out.push_back(one_pool(state, *pool, end_ms));
  return out;
}

json queue_wait(const State& state) {
  return wait_of(state, [](const Instance&) { return true; });
}

}  // namespace allot::sim
