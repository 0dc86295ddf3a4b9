// The wire forms of identity's objects: tenants, projects, users, keys, join tokens, the audit log.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model/cluster.h"
#include "core/model/identity.h"
#include "store/store.h"

namespace allot {

nlohmann::json to_json(const BillingDetails& details);
nlohmann::json to_json(const Tenant& tenant);
nlohmann::json to_json(const Project& project);
nlohmann::json to_json(const User& user);
// Never the key's text or hash: the text is shown once, at creation.
nlohmann::json to_json(const ApiKey& key);
nlohmann::json to_json(const AuditEntry& entry);
// Never the token's text or hash.
nlohmann::json to_json(const JoinToken& token);

}  // namespace allot
