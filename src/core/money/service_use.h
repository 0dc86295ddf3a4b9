// Callers' use of shared services (core/model/service.h): counted per hour at the service's
// prices, and paid from each caller's own account to the service's tenant's earnings.
#pragma once

#include <string>

#include "core/kernel/draft.h"
#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

// - RecordServiceUse: adds each count to its caller's row for the service, this hour and the
//   service's prices now; posts what the row's charge grew by from the caller's own account
//   (never its promotional credits, which are the operator's to give, not the service's tenant's
//   to earn) to the service's tenant's earnings, as far as the caller may spend; the rest stays
//   owed, and is invoiced. Refuses invalid_argument (no counts, too many, a negative or too large
//   one, the service's own tenant as its caller), not_found (no such service or caller tenant),
//   overflow (a charge past the range of amounts).
ALLOT_HANDLERS(RecordServiceUse);

void put(State& state, const ServiceUsage& usage);

// The id of the caller's row for the service in the hour starting at hour_ms at those prices.
std::string service_usage_id(const std::string& service_id, const std::string& caller_tenant_id,
                             TimeMs hour_ms, int64_t per_request_micros,
                             int64_t per_1k_tokens_micros);

// What the tenant may still pay for services' use now: its own account less what is held, and no
// more than it has available for work; unbounded (INT64_MAX) when its money is not limited.
int64_t spendable_on_services(const Draft& draft, const Tenant& tenant, TimeMs now_ms);

}  // namespace allot
