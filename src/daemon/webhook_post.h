// One webhook POST over a plain or TLS connection, bounded in time from connecting to the answer's
// status line. The receiver is someone else's server: it may be slow, silent or hostile, so nothing
// of its answer but the status is read, and a deadline covers every step.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "daemon/webhook.h"

namespace allot {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` as JSON with `headers` and Connection: close, to an address of the host that a
// webhook may reach (common/address_policy.h); returns the answer's HTTP status, or kUnavailable
// saying why there was none (cannot resolve or connect, only internal addresses, timed out, not
// HTTP).
[[nodiscard]] Result<int> post(const WebhookTarget& target, const std::string& body,
                               const HeaderList& headers, const AddressAllowList& allow,
                               int64_t timeout_ms);

}  // namespace allot
