// Routes outside the domains: Prometheus metrics.
#pragma once

#include <span>

#include "api/app.h"

namespace allot {

std::span<const Route> metrics_routes();

}  // namespace allot
