// The admission domain's routes: quotas, reservations, fair-share weights. Each resource's file
// holds its routes; the domain's list, in the order they are matched, is admission_domain_routes()
// (api/routes/admission.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> rules_routes();

std::vector<Route> admission_domain_routes();

}  // namespace allot
