// The wire forms of the pools domain's objects: node pools and the nodes they asked for.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model/pool.h"

namespace allot {

// A pool with its timers in seconds and its times as text.
nlohmann::json to_json(const Pool& pool);
// One node a pool asked its provider for: without its join token or delete bookkeeping.
nlohmann::json to_json(const PoolNode& node);

}  // namespace allot
