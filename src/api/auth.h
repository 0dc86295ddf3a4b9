// Who is calling, and what they may do. Keys are looked up by their SHA-256; a tenant's objects
// are visible to that tenant's users and to operator admins, and to no one else.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
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

}  // namespace allot
