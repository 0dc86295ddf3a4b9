// The scheduling framework: where a request for GPUs goes, as the Kubernetes scheduler framework
// shapes it. A policy is a list of filter plugins (can this node hold it at all?) and weighted
// score plugins (how good is it here, and on which GPUs?). Plugins are stateless between cycles;
// what one cycle computes once (e.g. the typical request shapes for FGD) lives in CycleState.
//
// The same code serves the controller (through an adapter from the core's state) and
// `allot sim replay` (on the trace's nodes), so what is measured is what runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace allot::sched {

struct GpuSlot {
  int index = 0;
  std::string model;      // Catalog or trace model name, e.g. "H100-80GB", "V100M16".
  int free_milli = 1000;  // 1000: the whole GPU is free.
  bool healthy = true;

  bool operator==(const GpuSlot&) const = default;
};

// A node as the scheduler sees it: what it has and what is free.
struct NodeView {
  std::string id;
  std::string region;
  std::map<std::string, std::string> labels;
  int64_t cpu_milli = 0;  // Capacity.
  int64_t memory_mib = 0;
  int64_t free_cpu_milli = 0;
  int64_t free_memory_mib = 0;
  std::vector<GpuSlot> gpus;

  bool operator==(const NodeView&) const = default;
};

// What is asked for. Exactly one of gpus (whole GPUs) or gpu_milli (a share of one GPU) is set;
// both zero means a CPU-only request.
struct Request {
  int gpus = 0;
  int gpu_milli = 0;
  std::vector<std::string> models;  // Allowed models or families; empty: any.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  std::string region;  // Empty: any.

  bool operator==(const Request&) const = default;
};

// Where a request goes: a node (index into the nodes given) and the exact GPUs.
struct Choice {
  size_t node = 0;
  std::vector<int> gpus;
};

// Computed once per cycle (per batch of decisions over a fixed workload mix) and read by plugins.
struct CycleState {
  // Typical request shapes with their weights (frequencies summing to 1), for
  // fragmentation-aware plugins. Empty when the policy needs none.
  std::vector<std::pair<Request, double>> typical;
  // Each region's grid carbon intensity at the moment of placement times its PUE: grams of CO2e
  // per kWh of IT energy, for the carbon score plugin. A region missing here is unknown; when the
  // map is empty the plugin scores every node alike.
  std::map<std::string, double> carbon_g_per_kwh;
  // For a request that states a preference (price, carbon or latency): each (region, GPU model)
  // it could use, ranked as `allot quote` ranks them (core/admission/quote.h), 0 the best. The
  // "prefer" score plugin reads it; when it is empty, as for every request without a preference,
  // the plugin scores every node alike.
  std::map<std::pair<std::string, std::string>, int> preference_rank;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  // Whether `node` can hold `request` at all; when not, `why` says so for an operator.
  virtual bool filter(const CycleState& cycle, const Request& request, const NodeView& node,
                      std::string& why) const = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view name() const = 0;
  // How good `node` is for `request` (higher is better), having passed the filters. Sets `gpus`
  // to the GPUs this plugin would use there (the policy's first score plugin picks the GPUs).
  virtual double score(const CycleState& cycle, const Request& request, const NodeView& node,
                       std::vector<int>& gpus) const = 0;
};

// A request waiting for a placement, as queue ordering sees it.
struct QueuedRequest {
  int priority = 0;  // Lower goes first: on-demand and reserved work 0, spot 1.
  double weighted_share =
      0;  // Its tenant's dominant share of the cluster over the tenant's weight.
  int64_t created_ms = 0;
  std::string id;  // The last tie-break, so that the order is total and repeatable.
};

class QueueSortPlugin {
 public:
  virtual ~QueueSortPlugin() = default;
  virtual std::string_view name() const = 0;
  // Whether `a` is tried before `b`.
  virtual bool less(const QueuedRequest& a, const QueuedRequest& b) const = 0;
};

// Holds what a chosen placement uses on the scheduler's copy of the node, so that the next
// decision sees it; unreserve gives it back (the request ended, or a later step refused it).
class ReservePlugin {
 public:
  virtual ~ReservePlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void reserve(NodeView& node, const Request& request, const Choice& choice) const = 0;
  virtual void unreserve(NodeView& node, const Request& request, const Choice& choice) const = 0;
};

// A named set of plugins with weights, at the framework's extension points: queue sort, filter,
// score and reserve. Binding (recording the placement, telling the node) is the controller's own
// step after reserve: the core's bind in allotd, nothing in the simulator.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // The best placement over `nodes`, or nullopt with `why` set (each filter's reason, counted).
  virtual std::optional<Choice> place(const CycleState& cycle, const Request& request,
                                      const std::vector<NodeView>& nodes,
                                      std::string& why) const = 0;
  // The order waiting requests are tried in. By default: priority, then the smaller weighted
  // share, then the older, then the id.
  virtual const QueueSortPlugin& queue_sort() const;
  // Runs the reserve plugins on `node` (unreserve: in reverse). By default: CPU, memory and GPU
  // milli, as allocate() and release() below.
  virtual void reserve(NodeView& node, const Request& request, const Choice& choice) const;
  virtual void unreserve(NodeView& node, const Request& request, const Choice& choice) const;
};

// The registry: "first-fit", "best-fit", "spread", "gpu-packing", "dot-product", "fgd", and
// Allot's own default, "allot". Unknown names fail with kInvalidArgument listing the known ones.
[[nodiscard]] Result<std::unique_ptr<Policy>> make_policy(std::string_view name);
std::vector<std::string_view> policy_names();
inline constexpr std::string_view kDefaultPolicy = "allot";

// A score plugin added to a policy after its own, with its weight. The policy's own plugin keeps
// weight 1 and still picks the GPUs, so an added plugin only changes which of the nodes that the
// filters admit wins. None is part of any policy unless added.
//
// "carbon": prefers nodes in regions whose grid emits less CO2e per kWh of IT energy (intensity
// times PUE, from CycleState::carbon_g_per_kwh). It scores minus one point per 100 g/kWh, so at
// weight 1 a region 100 g/kWh cleaner is worth what one step of the allot policy's FGD score is
// worth (about 40 GPU milli of fragmentation). A node whose region has no intensity counts as the
// worst known region.
//
// "prefer": part of every policy, after its own plugin and the added ones, at weight 1. It ranks
// nodes by CycleState::preference_rank, 10,000,000 points per step of rank, so that a request's
// preference decides the region and model, and the policy's own plugin decides among the nodes of
// the preferred one. With no ranking (no preference), it adds 0 everywhere and changes nothing.
struct AddedScore {
  std::string plugin;
  double weight = 1;
};
// The policy `name` with `added` after its own score plugin. Unknown policies or plugins, and
// weights that are not above 0, fail with kInvalidArgument.
[[nodiscard]] Result<std::unique_ptr<Policy>> make_policy(std::string_view name,
                                                          const std::vector<AddedScore>& added);
std::vector<std::string_view> added_score_names();

// The default plugins: queue order by priority, weighted share and age; reserve CPU, memory and
// GPU milli.
const QueueSortPlugin& priority_fair_share_sort();
const ReservePlugin& resources_reserve();

// Takes what a choice uses from a node (CPU, memory, GPU milli), and gives it back.
void allocate(NodeView& node, const Request& request, const Choice& choice);
void release(NodeView& node, const Request& request, const Choice& choice);

// The typical shapes of a workload: the most frequent request shapes covering `coverage` of
// requests, weighted by frequency. A shape is (whole GPUs, share milli, models, CPU milli), as in
// the FGD paper's simulator: requests that differ only in memory or region are one shape, and the
// shapes carry no memory and no region. CPU-only requests are shapes too.
CycleState typical_shapes(const std::vector<Request>& workload, double coverage = 0.95);

// Incremental placement for many decisions over one set of nodes (the simulator; the controller's
// batches). It owns the nodes, takes allocations, and keeps per node what the policy computed (the
// node's fragmentation, and for each request shape the filters' verdict, the score and the GPUs)
// until that node changes, so a decision costs one pass over cached numbers plus recomputing the
// nodes changed since the same shape was last placed. Its answers are exactly those of
// `policy.place(cycle, request, nodes(), why)`, which recomputes everything on every call; use
// Placer wherever more than a handful of decisions are made over the same nodes.
class Placer {
 public:
  // `policy` must outlive the Placer.
  Placer(const Policy& policy, CycleState cycle, std::vector<NodeView> nodes);
  ~Placer();
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // The best placement, or nullopt with `why` set; changes nothing.
  std::optional<Choice> place(const Request& request, std::string& why);
  // Apply a choice to nodes()[choice.node] through the policy's reserve plugins.
  void allocate(const Request& request, const Choice& choice);
  void release(const Request& request, const Choice& choice);
  // Replaces node `index` (a GPU turned unhealthy, a node drained), dropping its caches.
  void update(size_t index, NodeView node);
  // Replaces the cycle's state, dropping every cache but keeping the nodes.
  void set_cycle(CycleState cycle);
  const CycleState& cycle() const;
  const std::vector<NodeView>& nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace allot::sched
