#include "api/routes/money.h"

namespace allot {

std::vector<Route> money_domain_routes() {
  return join_routes(
      {price_routes(), invoice_routes(), usage_routes(), budget_routes(), money_routes()});
}

}  // namespace allot
