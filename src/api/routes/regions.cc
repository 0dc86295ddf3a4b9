#include "api/routes/regions.h"

namespace allot {

std::vector<Route> regions_domain_routes() { return join_routes({region_routes()}); }

}  // namespace allot
