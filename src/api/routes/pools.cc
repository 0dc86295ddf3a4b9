#include "api/routes/pools.h"

namespace allot {

std::vector<Route> pools_domain_routes() { return join_routes({pool_routes(), spot_routes()}); }

}  // namespace allot
