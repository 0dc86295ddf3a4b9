// The identity domain's routes: tenants, projects, users, API keys, the audit log. Each resource's
// file holds its routes; the domain's list, in the order they are matched, is
// identity_domain_routes() (api/routes/identity.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> identity_routes();

std::vector<Route> identity_domain_routes();

}  // namespace allot
