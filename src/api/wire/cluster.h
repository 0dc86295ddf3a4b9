// The wire forms of the cluster's objects: nodes, instances, idle-stop policies.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model/cluster.h"
#include "core/model/idle_policy.h"

namespace allot {

// A node as the operator sees it: with its state, never its credential's hash, and without its
// images (GET /v1/images lists those).
nlohmann::json to_json(const Node& node);
nlohmann::json to_json(const Instance& instance);
nlohmann::json to_json(const IdlePolicy& policy);

}  // namespace allot
