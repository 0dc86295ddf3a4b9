#include "core/cluster/registries.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/image_ref.h"
#include "common/limits.h"
#include "core/kernel/lookups.h"

namespace allot {

Result<Rows> apply(const State& state, const SetRegistryCredential& command, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const RegistryCredential& c = command.credential;
  if (state.tenant(c.tenant_id) == nullptr) {
    return std::unexpected(not_found("tenant", c.tenant_id));
  }
  // The host is what an image reference names as its registry, and nothing else.
  auto ref = parse_image_ref(c.host + "/x");
  if (!ref || ref->registry != c.host) {
    return fail(ErrorCode::kInvalidArgument,
                "host must be a registry as image references name it, HOST[:PORT] with a '.' or "
                "a port, or localhost, not '" +
                    c.host + "'");
  }
  if (c.username.empty() || c.username.size() > 256 ||
      c.username.find_first_of(":\r\n") != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                "username must be 1 to 256 characters, without ':' or line breaks");
  }
  if (c.sealed_password.empty()) {
    return fail(ErrorCode::kInvalidArgument, "password must not be empty");
  }
  if (state.registry_credential(c.tenant_id, c.host) == nullptr) {
    const auto held = std::ranges::count_if(state.registry_credentials, [&](const auto& entry) {
      return entry.second.tenant_id == c.tenant_id;
    });
    if (static_cast<size_t>(held) >= limits::kMaxRegistryCredentials) {
      return fail(ErrorCode::kLimitExceeded,
                  fmt::format("a tenant holds at most {} registry credentials",
                              limits::kMaxRegistryCredentials));
    }
  }
  RegistryCredential row = c;
  row.updated_at_ms = now_ms;
  row.deleted_at_ms = 0;
  return Rows{std::move(row)};
}

Result<Rows> apply(const State& state, const DeleteRegistryCredential& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const RegistryCredential* found = state.registry_credential(c.tenant_id, c.host);
  if (found == nullptr) {
    return fail(ErrorCode::kNotFound, "no registry credential for " + c.host);
  }
  RegistryCredential gone = *found;
  gone.sealed_password.clear();  // A tombstone keeps nothing of the secret.
  gone.updated_at_ms = now_ms;
  gone.deleted_at_ms = now_ms;
  return std::vector<Row>{gone};
}

// A deleted credential leaves the state; its row stays in the store, marked deleted.
void put(State& state, const RegistryCredential& credential) {
  put_live(state.registry_credentials, credential.key(), credential);
}

}  // namespace allot
