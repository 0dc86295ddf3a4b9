#include "core/kernel/slices/identity.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Tenant* IdentitySlice::tenant(const std::string& id) const { return find_by_id(tenants, id); }

const Project* IdentitySlice::project(const std::string& id) const {
  return find_by_id(projects, id);
}

const User* IdentitySlice::user(const std::string& id) const { return find_by_id(users, id); }

const ApiKey* IdentitySlice::key(const std::string& id) const { return find_by_id(keys, id); }

std::string IdentitySlice::operator_tenant_id() const {
  for (const auto& [id, tenant] : tenants) {
    if (tenant.is_operator) return id;
  }
  return {};
}

const ApiKey* IdentitySlice::key_for_hash(const std::string& token_hash) const {
  auto it = key_by_hash.find(token_hash);
  return it == key_by_hash.end() ? nullptr : key(it->second);
}

}  // namespace allot
