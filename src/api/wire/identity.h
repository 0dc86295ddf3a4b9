// The wire forms of identity's objects: tenants, projects, users, keys, join tokens, the audit log.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/model/cluster.h"
#include "core/model/identity.h"
#include "store/store.h"

namespace allot {

// Billing details' fields by their names on the wire: what to_json shows and a PATCH may set.
struct BillingDetailsField {
  std::string_view name;
  std::string BillingDetails::* member;
};
inline constexpr BillingDetailsField kBillingDetailsFields[] = {
    {"legal_name", &BillingDetails::legal_name},
    {"address", &BillingDetails::address},
    {"tax_id", &BillingDetails::tax_id},
    {"email", &BillingDetails::email},
};

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
