#include "api/auth.h"

#include "common/limits.h"
#include "common/random.h"

namespace allot {

Result<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.empty()) {
    return fail(ErrorCode::kUnauthenticated, "send a key as 'Authorization: Bearer KEY'");
  }
  if (!authorization.starts_with(kScheme)) {
    return fail(ErrorCode::kUnauthenticated, "the Authorization header must use the Bearer scheme");
  }
  const std::string_view token = authorization.substr(kScheme.size());
  if (token.size() < limits::kMinKeyBytes || token.size() > limits::kMaxKeyBytes) {
    return fail(ErrorCode::kUnauthenticated, "unknown or revoked key");
  }
  return token;
}

Result<Caller> authenticate_node(const State& state, std::string_view authorization) {
  auto token = bearer_token(authorization);
  if (!token) return std::unexpected(token.error());
  const Node* node = state.node_for_credential(sha256_hex(*token));
  if (node == nullptr)
    return fail(ErrorCode::kUnauthenticated, "unknown or revoked node credential");
  return Caller{.node_id = node->id};
}

Result<Caller> authenticate(const State& state, std::string_view authorization) {
  return authenticate_key(state, authorization);
}

Result<Caller> caller_of(const ApiKey* key, const User* user) {
  if (key == nullptr || key->revoked_at_ms != 0 || user == nullptr || user->disabled) {
    return fail(ErrorCode::kUnauthenticated, "unknown or revoked API key");
  }
  return Caller{
      .user_id = user->id, .key_id = key->id, .tenant_id = user->tenant_id, .role = user->role};
}

bool may_see_tenant(const Caller& caller, std::string_view tenant_id) {
  return caller.is_operator_admin() || caller.tenant_id == tenant_id;
}

Status require_admin_of(const Caller& caller, std::string_view tenant_id) {
  if (!may_see_tenant(caller, tenant_id)) {
    return fail(ErrorCode::kNotFound, "no such tenant");
  }
  if (caller.is_operator_admin() || caller.role == Role::kTenantAdmin) return {};
  return fail(ErrorCode::kForbidden, "this needs a tenant admin or an operator admin");
}

Status require_operator_admin(const Caller& caller) {
  if (caller.is_operator_admin()) return {};
  return fail(ErrorCode::kForbidden, "this needs an operator admin");
}

}  // namespace allot
