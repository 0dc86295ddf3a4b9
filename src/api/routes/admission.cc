#include "api/routes/admission.h"

namespace allot {

std::vector<Route> admission_domain_routes() { return join_routes({rules_routes()}); }

}  // namespace allot
