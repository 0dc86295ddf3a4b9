// A shared service's margin over a window: what its callers in other tenants were charged for
// their use of it (and what of that their balances paid) against what its replicas' GPU time
// cost its own tenant, at the same prices and by the same rating as invoices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/kernel/state.h"

namespace allot::billing {

struct CallerUse {
  std::string tenant_id;
  int64_t requests = 0;
  int64_t tokens = 0;
  int64_t malformed = 0;
  int64_t failed = 0;
  int64_t charged_micros = 0;
  int64_t paid_micros = 0;

  bool operator==(const CallerUse&) const = default;
};

struct ServiceMargin {
  std::vector<CallerUse> callers;  // By tenant id.
  CallerUse total;                 // Its tenant_id empty.
  int64_t replica_gpu_milli_seconds = 0;
  int64_t gpu_cost_micros = 0;  // The replicas' charge within the window.
  int64_t margin_micros = 0;    // Charged to callers less the GPU cost.
};

// Over [from_ms, to_ms): callers' use counted by the hours that start within it, and the
// replicas' GPU time within it. kOverflow when a sum leaves int64.
[[nodiscard]] Result<ServiceMargin> service_margin(const State& state, const HostedService& service,
                                                   TimeMs from_ms, TimeMs to_ms, TimeMs now_ms);

}  // namespace allot::billing
