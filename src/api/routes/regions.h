// The regions domain's routes: the region catalog, quotes and the latency table. Each resource's
// file holds its routes; the domain's list, in the order they are matched, is
// regions_domain_routes() (api/routes/regions.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> region_routes();

std::vector<Route> regions_domain_routes();

}  // namespace allot
