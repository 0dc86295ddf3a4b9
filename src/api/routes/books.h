// The books domain's routes: the operator's books: assets; sites, fixed costs and rental prices;
// the month's reports. Each resource's file holds its routes; the domain's list, in the order they
// are matched, is books_domain_routes() (api/routes/books.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> finance_asset_routes();
std::span<const Route> finance_book_routes();
std::span<const Route> finance_report_routes();

std::vector<Route> books_domain_routes();

}  // namespace allot
