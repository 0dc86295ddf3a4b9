// The pools domain's routes: node pools and spot price rules. Each resource's file holds its
// routes; the domain's list, in the order they are matched, is pools_domain_routes()
// (api/routes/pools.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> pool_routes();
std::span<const Route> spot_routes();

std::vector<Route> pools_domain_routes();

}  // namespace allot
