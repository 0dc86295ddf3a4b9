// Where an instance runs: the node and the exact GPUs. The core asks a Scheduler; the plain
// first-fit below is the default until the scheduling framework replaces it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/draft.h"

namespace allot {

struct Placement {
  std::string node_id;
  std::vector<int> gpu_indices;
};

// Which nodes a placement may use (a gang's scope, minus the nodes its other members took); an
// empty function admits every node.
using NodeFilter = std::function<bool(const Node&)>;

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // A placement for `instance` on the nodes as `draft` sees them that `only` admits, or nullopt
  // with `why` set to a reason an operator can read.
  virtual std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                         const NodeFilter& only, std::string& why) const = 0;
};

// Whether a node takes new work at all: joined, heard from, not lost, cordoned or draining.
bool node_takes_work(const Node& node);

// The GPUs of `node` that `instance` could use now, in index order (whole GPUs: free ones;
// fractions: ones with room), or empty when the node cannot hold it (region, models, CPU, memory).
std::vector<int> fitting_gpus(const Node& node, const InstanceSpec& spec);

// The first node in id order with room, and its lowest-indexed fitting GPUs.
const Scheduler& first_fit_scheduler();

}  // namespace allot
