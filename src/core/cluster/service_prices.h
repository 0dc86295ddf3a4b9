// A shared service's prices as its callers meet them: a fall reaches them at once, a rise only
// after a notice (CoreOptions::service_price_notice_ms), announced to each caller tenant as a
// "service.price_rising" event, and to its webhook where it has one.
#pragma once

#include <optional>

#include "core/kernel/draft.h"
#include "core/model/service.h"

namespace allot {

// Sets `next`'s prices to what is asked (nullopt: unchanged), from `found` as it stands at
// `now_ms`: an announced rise whose time has come is in force first. A rise on a shared service
// with live caller keys is announced (events added to `draft`) and takes effect `notice_ms` on;
// what falls takes effect at once.
void set_service_prices(Draft& draft, const HostedService& found, HostedService& next,
                        std::optional<int64_t> per_request_micros,
                        std::optional<int64_t> per_1k_tokens_micros, TimeMs now_ms,
                        int64_t notice_ms);

}  // namespace allot
