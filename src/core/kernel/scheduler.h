// Where an instance runs: the node and the exact GPUs. The core asks a Scheduler; the plain
// first-fit below is the default until the scheduling framework replaces it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel/draft.h"

namespace allot {

struct Placement {
  std::string node_id;
  std::vector<int> gpu_indices;
};

// Which nodes a placement may use (a gang's scope, minus the nodes its other members took); an
// empty function admits every node.
using NodeFilter = std::function<bool(const Node&)>;

// Where a queued instance stands, for the order in which the queue is tried.
struct QueuePosition {
  int priority = 0;           // On-demand and reserved work 0, spot 1.
  double weighted_share = 0;  // Its tenant's dominant share over the tenant's weight.
  TimeMs created_ms = 0;
  std::string key;  // Its id, or its gang's id and rank: the last tie-break.
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Whether `a` is tried before `b`. By default: priority, then the smaller weighted share, then
  // the older, then the key.
  virtual bool queue_before(const QueuePosition& a, const QueuePosition& b) const;
  // A placement for `instance` on the nodes as `draft` sees them that `only` admits, or nullopt
  // with `why` set to a reason an operator can read.
  virtual std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                         const NodeFilter& only, std::string& why) const = 0;
};

// Whether a node takes new work at all: joined, heard from, not lost, cordoned or draining.
bool node_takes_work(const Node& node);

// Whether the spec's models (empty: any) allow a GPU of `gpu_model`.
bool model_allowed(const InstanceSpec& spec, std::string_view gpu_model);
// Whether the spec's allowed regions (empty: any) include `region`.
bool region_allowed(const InstanceSpec& spec, std::string_view region);

// The GPUs of `node` that `instance` could use now, in index order (whole GPUs: free ones;
// fractions: ones with room), or empty when the node cannot hold it (region, models, CPU, memory).
std::vector<int> fitting_gpus(const Node& node, const InstanceSpec& spec);

// The first node in id order with room, and its lowest-indexed fitting GPUs.
const Scheduler& first_fit_scheduler();

}  // namespace allot
