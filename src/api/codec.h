// The JSON form of each object the API returns.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model/cluster.h"
#include "core/model/identity.h"
#include "core/model/rules.h"
#include "meter/rating.h"
#include "store/store.h"

namespace allot {

// A time as the API writes it, or null for 0 (not yet, never).
nlohmann::json time_or_null(TimeMs at_ms);

nlohmann::json to_json(const BillingDetails& details);
nlohmann::json to_json(const Tenant& tenant);
nlohmann::json to_json(const Project& project);
nlohmann::json to_json(const User& user);
// Never includes the key's text or hash: the text is shown once, at creation.
nlohmann::json to_json(const ApiKey& key);
nlohmann::json to_json(const AuditEntry& entry);
nlohmann::json to_json(const JoinToken& token);
// A node as the operator sees it: with its state, never its credential's hash.
nlohmann::json to_json(const Node& node);
nlohmann::json to_json(const Instance& instance);
nlohmann::json to_json(const Quota& quota);
nlohmann::json to_json(const Reservation& reservation);
// A price with its rates as decimal strings, and whether it is the one in force at `at_ms`.
nlohmann::json to_json(const meter::Price& price, TimeMs at_ms);

}  // namespace allot
