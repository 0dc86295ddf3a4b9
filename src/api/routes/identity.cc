#include "api/routes/identity.h"

namespace allot {

std::vector<Route> identity_domain_routes() { return join_routes({identity_routes()}); }

}  // namespace allot
