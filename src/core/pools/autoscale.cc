// Scale-up packs the queued work that found no room into the free room of each pool's nodes
// (booting ones count as empty nodes of the pool's shape) and then into new nodes, first fit
// decreasing; an instance is claimed by the first pool, by name, that can take it (its shape, and
// a region and price the work accepts). Scale-down takes
// away ready nodes that ran nothing for the pool's idle timeout, never below the minimum, never
// while the pool has work waiting for it.
#include "core/pools/autoscale.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/kernel/gpu_models.h"
#include "core/pools/pools.h"

namespace allot {
namespace {

// Free room on one node, real or imagined.
struct Bin {
  std::vector<int> free_milli;  // Per GPU.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  bool take(const InstanceSpec& spec) {
    if (spec.cpu_milli > cpu_milli || spec.memory_mib > memory_mib) return false;
    if (spec.gpus > 0) {
      std::vector<size_t> whole;
      for (size_t i = 0; i < free_milli.size() && whole.size() < static_cast<size_t>(spec.gpus);
           ++i) {
        if (free_milli[i] == 1000) whole.push_back(i);
      }
      if (whole.size() < static_cast<size_t>(spec.gpus)) return false;
      for (size_t i : whole) free_milli[i] = 0;
    } else {
      auto it = std::find_if(free_milli.begin(), free_milli.end(),
                             [&](int free) { return free >= spec.gpu_milli; });
      if (it == free_milli.end()) return false;
      *it -= spec.gpu_milli;
    }
    cpu_milli -= spec.cpu_milli;
    memory_mib -= spec.memory_mib;
    return true;
  }
};

Bin empty_node(const Pool& pool) {
  return Bin{.free_milli = std::vector<int>(static_cast<size_t>(pool.gpus_per_node), 1000),
             .cpu_milli = pool.cpu_milli,
             .memory_mib = pool.memory_mib};
}

Bin free_room(const Node& node) {
  Bin bin{.cpu_milli = node.cpu_milli - node.used_cpu_milli,
          .memory_mib = node.memory_mib - node.used_memory_mib};
  if (node.lost || node.admin != NodeAdmin::kNone) return bin;  // Takes no work.
  for (const Gpu& gpu : node.gpus) {
    if (gpu.healthy) bin.free_milli.push_back(1000 - gpu.used_milli);
  }
  return bin;
}

bool shape_fits(const Pool& pool, const InstanceSpec& spec) {
  if (!spec.region.empty() && spec.region != pool.region) return false;
  if (spec.gpus > pool.gpus_per_node) return false;
  if (spec.cpu_milli > pool.cpu_milli || spec.memory_mib > pool.memory_mib) return false;
  if (spec.gpu_models.empty()) return true;
  return std::any_of(spec.gpu_models.begin(), spec.gpu_models.end(),
                     [&](const std::string& m) { return gpu_model_matches(m, pool.gpu_model); });
}

// Whether work of `spec` could run on a node of `pool` once it joins: in a region the work allows,
// at a price of its class (work is never placed where it would run uncharged) within its maximum.
bool pool_may_run(const State& state, const Pool& pool, const InstanceSpec& spec, TimeMs now_ms) {
  if (!region_allowed(spec, pool.region)) return false;
  const meter::Price* price = state.prices.charged(
      {.model = pool.gpu_model, .region = pool.region, .price_class = spec.price_class}, now_ms);
  return price != nullptr &&
         (spec.max_price_micros <= 0 || price->gpu_hour_micros <= spec.max_price_micros);
}

// What each pool node's machine is doing: whether it holds work, and when work last ended there.
struct NodeUse {
  bool busy = false;
  TimeMs last_end_ms = 0;
};

std::map<std::string, NodeUse> node_use(const State& state) {
  std::map<std::string, NodeUse> use;
  for (const auto& [id, instance] : state.instances) {
    if (instance.node_id.empty()) continue;
    NodeUse& u = use[instance.node_id];
    if (!is_final(instance.state) && instance.state != InstanceState::kQueued) u.busy = true;
    u.last_end_ms = std::max(u.last_end_ms, instance.ended_at_ms);
  }
  return use;
}

int64_t size_of(const InstanceSpec& spec) { return (int64_t{spec.gpus} * 1000) + spec.gpu_milli; }

}  // namespace

bool waits_for_room(const Instance& instance) {
  return instance.state == InstanceState::kQueued && !instance.reason.starts_with("waits: ");
}

std::vector<ScaleDecision> plan_scaling(const State& state, TimeMs now_ms,
                                        const ScaleOptions& options) {
  // Without a pool that can grow or shrink there is nothing to plan: the queue, which may be
  // long, is not walked at all.
  std::vector<const Pool*> pools;
  for (const auto& [id, pool] : state.pools) {
    if (!pool.deleted() && pool.provider != PoolProvider::kStatic) pools.push_back(&pool);
  }
  if (pools.empty()) return {};
  std::sort(pools.begin(), pools.end(),
            [](const Pool* a, const Pool* b) { return a->name < b->name; });

  std::vector<const Instance*> waiting;
  for (const std::string& id : state.queue) {
    const Instance* instance = state.instance(id);
    if (instance != nullptr && waits_for_room(*instance)) waiting.push_back(instance);
  }
  std::sort(waiting.begin(), waiting.end(), [](const Instance* a, const Instance* b) {
    if (size_of(a->spec) != size_of(b->spec)) return size_of(a->spec) > size_of(b->spec);
    return a->id < b->id;
  });
  std::vector<bool> claimed(waiting.size(), false);
  const std::map<std::string, NodeUse> use = node_use(state);

  std::vector<ScaleDecision> out;
  for (const Pool* pool : pools) {
    std::vector<Bin> bins;
    std::vector<const PoolNode*> idle;
    int live = 0;
    for (const auto& [id, pn] : state.pool_nodes) {
      if (pn.pool_id != pool->id || !pn.live()) continue;
      if (pn.state == PoolNodeState::kBooting &&
          now_ms - pn.requested_at_ms >= pool->boot_timeout_ms) {
        out.push_back(
            {.kind = ScaleDecision::Kind::kBootTimeout,
             .pool_id = pool->id,
             .pool_node_id = pn.id,
             .reason = fmt::format("did not join within {} s", pool->boot_timeout_ms / 1000)});
        continue;
      }
      ++live;
      if (pn.state == PoolNodeState::kDeleting) {
        const TimeMs last = std::max(pn.retired_at_ms, pn.delete_tried_at_ms);
        if (now_ms - last >= options.delete_retry_ms) {
          out.push_back(
              {.kind = ScaleDecision::Kind::kDelete,
               .pool_id = pool->id,
               .pool_node_id = pn.id,
               .reason = fmt::format("deletion tried again (attempt {})", pn.delete_attempts + 1)});
        }
        continue;
      }
      if (pn.state == PoolNodeState::kBooting) {
        bins.push_back(empty_node(*pool));
        continue;
      }
      const Node* node = state.node(pn.node_id);
      if (node == nullptr) continue;
      bins.push_back(free_room(*node));
      auto u = use.find(node->id);
      const bool busy = u != use.end() && u->second.busy;
      const TimeMs since = std::max(pn.joined_at_ms, u == use.end() ? 0 : u->second.last_end_ms);
      if (!busy && now_ms - since >= pool->idle_timeout_ms) idle.push_back(&pn);
    }

    // Work waiting for room that this pool's nodes, or new ones, could take.
    const bool may_grow = now_ms - pool->last_scale_up_ms >= pool->cooldown_ms;
    const int room_for = std::max(0, pool->max_nodes - live);
    int new_nodes = 0;
    bool has_demand = false;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (claimed[i] || !shape_fits(*pool, waiting[i]->spec) ||
          !pool_may_run(state, *pool, waiting[i]->spec, now_ms)) {
        continue;
      }
      const InstanceSpec& spec = waiting[i]->spec;
      bool placed = std::any_of(bins.begin(), bins.end(), [&](Bin& b) { return b.take(spec); });
      if (!placed && may_grow && new_nodes < room_for) {
        bins.push_back(empty_node(*pool));
        placed = bins.back().take(spec);
        ++new_nodes;
      }
      if (placed) {
        claimed[i] = true;
        has_demand = true;
      }
    }
    int wanted = new_nodes;
    std::string reason = fmt::format("{} queued instances fit no node; {} new nodes take them",
                                     std::count(claimed.begin(), claimed.end(), true), new_nodes);
    if (live + wanted < pool->min_nodes) {
      wanted = pool->min_nodes - live;
      reason = fmt::format("below the minimum of {} nodes", pool->min_nodes);
    }
    const auto forecast = options.forecast_nodes.find(pool->id);
    const int forecast_nodes =
        forecast == options.forecast_nodes.end() ? 0 : std::min(forecast->second, pool->max_nodes);
    if (may_grow && live + wanted < forecast_nodes) {
      wanted = forecast_nodes - live;
      reason = fmt::format("the forecast wants {} nodes ahead of demand", forecast_nodes);
    }
    wanted = std::min(wanted, room_for);
    if (wanted > 0) {
      out.push_back({.kind = ScaleDecision::Kind::kLaunch,
                     .pool_id = pool->id,
                     .count = wanted,
                     .reason = std::move(reason)});
      continue;
    }
    if (has_demand) continue;  // Its nodes are about to take work: none goes now.
    int spare = live - std::max(pool->min_nodes, forecast_nodes);
    for (const PoolNode* pn : idle) {
      if (spare <= 0) break;
      out.push_back({.kind = ScaleDecision::Kind::kRetire,
                     .pool_id = pool->id,
                     .pool_node_id = pn->id,
                     .reason = fmt::format("idle for {} s", pool->idle_timeout_ms / 1000)});
      --spare;
    }
  }
  return out;
}

}  // namespace allot
