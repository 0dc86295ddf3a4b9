// One changed object: what the store writes for a command, and what it loads back.
#pragma once

#include <variant>

#include "core/budget.h"
#include "core/cluster.h"
#include "core/model.h"
#include "core/rules.h"
#include "meter/rating.h"

namespace allot {

using Row = std::variant<Tenant, Project, User, ApiKey, JoinToken, Node, Instance, Quota,
                         Reservation, meter::Price, Budget, BudgetAlert, Event>;

}  // namespace allot
