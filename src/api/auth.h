// Who is calling, and what they may do. Keys are looked up by their SHA-256; a tenant's objects
// are visible to that tenant's users and to operator admins, and to no one else.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "common/random.h"
#include "core/kernel/state.h"

namespace allot {

struct Caller {
  std::string user_id;
  std::string key_id;
  std::string tenant_id;
  Role role = Role::kViewer;
  std::string node_id;  // Set instead of the above when a node agent calls.

  bool is_operator_admin() const { return role == Role::kOperatorAdmin; }
};

// Reads "Bearer <key>" and finds its live key and enabled user; kUnauthenticated otherwise.
[[nodiscard]] Result<Caller> authenticate(const State& state, std::string_view authorization);

// The same, in anything that finds keys by hash and users by id as State does (`key_for_hash`,
// `user`), e.g. the read view.
template <typename Lookups>
[[nodiscard]] Result<Caller> authenticate_key(const Lookups& lookups,
                                              std::string_view authorization);

// Reads "Bearer <credential>" of a node agent; kUnauthenticated for unknown credentials.
[[nodiscard]] Result<Caller> authenticate_node(const State& state, std::string_view authorization);

// The text after "Bearer ", or kUnauthenticated.
[[nodiscard]] Result<std::string_view> bearer_token(std::string_view authorization);

// Operator admins see every tenant; everyone else sees their own.
bool may_see_tenant(const Caller& caller, std::string_view tenant_id);

// The caller is an operator admin, or a tenant admin of `tenant_id`. A caller who cannot even
// see the tenant gets kNotFound, so that other tenants' objects are not revealed.
[[nodiscard]] Status require_admin_of(const Caller& caller, std::string_view tenant_id);

[[nodiscard]] Status require_operator_admin(const Caller& caller);

// The caller a key stands for: kUnauthenticated when it is missing or revoked, or its user is
// missing or disabled.
[[nodiscard]] Result<Caller> caller_of(const ApiKey* key, const User* user);

template <typename Lookups>
Result<Caller> authenticate_key(const Lookups& lookups, std::string_view authorization) {
  auto bearer = bearer_token(authorization);
  if (!bearer) return std::unexpected(bearer.error());
  // The lookup is by a hash of the whole key, so comparing texts never happens and its timing
  // reveals nothing about stored keys.
  const ApiKey* key = lookups.key_for_hash(sha256_hex(*bearer));
  return caller_of(key, key == nullptr ? nullptr : lookups.user(key->user_id));
}

}  // namespace allot
