// Reading a scenario's node pools, its forecast settings and its generated workloads
// (docs/sim.md). Every error names the field, e.g. "pools[0].max: ...".
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "sim/scenario.h"

namespace allot::sim {

// Reads `pools`, `autoscale_interval_s` and `forecast` into `s`.
[[nodiscard]] Status parse_pools(const nlohmann::json& doc, Scenario& s);

// Reads `workload` (one generator or a list of them) and appends the submits it generates to
// s.events. The tenants must have been read: a generator names one.
[[nodiscard]] Status parse_workloads(const nlohmann::json& doc, Scenario& s);

}  // namespace allot::sim
