#include "api/routes/books.h"

namespace allot {

std::vector<Route> books_domain_routes() {
  return join_routes({finance_asset_routes(), finance_book_routes(), finance_report_routes()});
}

}  // namespace allot
