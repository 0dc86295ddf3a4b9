// The money domain's routes: prices, invoices, usage, budgets and events, top-ups and balances.
// Each resource's file holds its routes; the domain's list, in the order they are matched, is
// money_domain_routes() (api/routes/money.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> price_routes();
std::span<const Route> invoice_routes();
std::span<const Route> usage_routes();
std::span<const Route> budget_routes();
std::span<const Route> money_routes();

std::vector<Route> money_domain_routes();

}  // namespace allot
