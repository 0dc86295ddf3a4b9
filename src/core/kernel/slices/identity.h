// Identity's part of the state: tenants, their projects, users and API keys.
#pragma once

#include <map>
#include <string>
#include <unordered_map>

#include "core/model/identity.h"

namespace allot {

struct IdentitySlice {
  std::map<std::string, Tenant> tenants;
  std::map<std::string, Project> projects;
  std::map<std::string, User> users;
  std::map<std::string, ApiKey> keys;
  std::unordered_map<std::string, std::string> key_by_hash;  // key hash -> key id, kept by put

  const Tenant* tenant(const std::string& id) const;
  const Project* project(const std::string& id) const;
  const User* user(const std::string& id) const;
  const ApiKey* key(const std::string& id) const;
  const ApiKey* key_for_hash(const std::string& token_hash) const;
  // The operator's tenant id (empty before the bootstrap).
  std::string operator_tenant_id() const;
};

}  // namespace allot
