// The identity domain: tenants, their projects and users, and users' API keys.
#include "core/identity/identity.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

template <typename Map, typename Pred>
size_t count_if_values(const Map& map, Pred pred) {
  return static_cast<size_t>(
      std::count_if(map.begin(), map.end(), [&](const auto& entry) { return pred(entry.second); }));
}

size_t live_operator_admins(const State& state) {
  return count_if_values(
      state.users, [](const User& u) { return u.role == Role::kOperatorAdmin && !u.disabled; });
}

Status check_role_fits_tenant(const Tenant& tenant, Role role) {
  if (role == Role::kOperatorAdmin && !tenant.is_operator) {
    return fail(ErrorCode::kInvalidArgument,
                "only users of the operator tenant can be operator admins");
  }
  return {};
}

}  // namespace

Result<Rows> apply(const State& state, const CreateTenant& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "ten"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (state.tenant(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "tenant id taken");
  if (state.tenants.size() >= limits::kMaxTenants) {
    return fail(ErrorCode::kLimitExceeded, "the cloud holds the most tenants it may");
  }
  for (const auto& [id, tenant] : state.tenants) {
    if (tenant.name == c.name) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a tenant named '{}' exists", c.name));
    }
    if (c.is_operator && tenant.is_operator) {
      return fail(ErrorCode::kAlreadyExists, "the operator tenant exists");
    }
  }
  return Rows{
      Tenant{.id = c.id, .name = c.name, .is_operator = c.is_operator, .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const CreateProject& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "prj"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (state.tenant(c.tenant_id) == nullptr) {
    return std::unexpected(not_found("tenant", c.tenant_id));
  }
  if (state.project(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "project id taken");
  size_t live = 0;
  for (const auto& [id, project] : state.projects) {
    if (project.tenant_id != c.tenant_id || project.deleted_at_ms != 0) continue;
    ++live;
    if (project.name == c.name) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a project named '{}' exists", c.name));
    }
  }
  if (live >= limits::kMaxProjectsPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most projects it may");
  }
  return Rows{
      Project{.id = c.id, .tenant_id = c.tenant_id, .name = c.name, .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const DeleteProject& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return delete_row(state.project(c.id), "project", c.id, now_ms);
}

Result<Rows> apply(const State& state, const CreateUser& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "usr"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_email(c.email); !ok) return std::unexpected(ok.error());
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  if (auto ok = check_role_fits_tenant(*tenant, c.role); !ok) return std::unexpected(ok.error());
  if (state.user(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "user id taken");
  size_t members = 0;
  for (const auto& [id, user] : state.users) {
    if (user.tenant_id != c.tenant_id) continue;
    ++members;
    if (user.email == c.email) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a user with e-mail {} exists", c.email));
    }
  }
  if (members >= limits::kMaxUsersPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most users it may");
  }
  return Rows{User{.id = c.id,
                   .tenant_id = c.tenant_id,
                   .name = c.name,
                   .email = c.email,
                   .role = c.role,
                   .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const UpdateUser& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  const User* current = state.user(c.id);
  if (current == nullptr) return std::unexpected(not_found("user", c.id));
  User next = *current;
  if (c.name) {
    if (auto ok = check_name("name", *c.name); !ok) return std::unexpected(ok.error());
    next.name = *c.name;
  }
  if (c.role) {
    const Tenant* tenant = state.tenant(current->tenant_id);
    assert(tenant != nullptr);
    if (auto ok = check_role_fits_tenant(*tenant, *c.role); !ok) return std::unexpected(ok.error());
    next.role = *c.role;
  }
  if (c.disabled) next.disabled = *c.disabled;
  const bool was_admin = current->role == Role::kOperatorAdmin && !current->disabled;
  const bool is_admin = next.role == Role::kOperatorAdmin && !next.disabled;
  if (was_admin && !is_admin && live_operator_admins(state) == 1) {
    return fail(ErrorCode::kConflict, "the last operator admin cannot be demoted or disabled");
  }
  if (next == *current) return Rows{};
  return Rows{next};
}

Result<Rows> apply(const State& state, const CreateKey& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "key"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  const User* user = state.user(c.user_id);
  if (user == nullptr) return std::unexpected(not_found("user", c.user_id));
  if (user->disabled) return fail(ErrorCode::kConflict, "the user is disabled");
  if (state.key(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "key id taken");
  if (c.token_hash.size() != 64) return fail(ErrorCode::kInvalidArgument, "bad key hash");
  if (state.key_for_hash(c.token_hash) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "that key is already registered");
  }
  const size_t live = count_if_values(
      state.keys, [&](const ApiKey& k) { return k.user_id == c.user_id && k.revoked_at_ms == 0; });
  if (live >= limits::kMaxKeysPerUser) {
    return fail(ErrorCode::kLimitExceeded, "the user holds the most live keys it may");
  }
  return Rows{ApiKey{.id = c.id,
                     .user_id = c.user_id,
                     .tenant_id = user->tenant_id,
                     .name = c.name,
                     .prefix = c.prefix,
                     .token_hash = c.token_hash,
                     .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const RevokeKey& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  // Revoking twice is harmless: the key stays revoked from the first time.
  return set_once(state.key(c.id), &ApiKey::revoked_at_ms, "key", c.id, now_ms);
}

void put(State& state, const Tenant& tenant) { state.tenants[tenant.id] = tenant; }

void put(State& state, const Project& project) { state.projects[project.id] = project; }

void put(State& state, const User& user) { state.users[user.id] = user; }

void put(State& state, const ApiKey& key) {
  state.keys[key.id] = key;
  state.key_by_hash[key.token_hash] = key.id;
}

}  // namespace allot
