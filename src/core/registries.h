// Setting and deleting tenants' registry credentials (core/registry.h).
#pragma once

#include "core/command.h"
#include "core/row.h"
#include "core/state.h"

namespace allot {

// kNotFound for an unknown tenant; kInvalidArgument for a malformed host or an empty username,
// password or one with a line break; kLimitExceeded past limits::kMaxRegistryCredentials.
[[nodiscard]] Result<std::vector<Row>> set_registry_credential(const State& state,
                                                               const SetRegistryCredential& c,
                                                               TimeMs now_ms);
// kNotFound when the tenant has no credential for the host.
[[nodiscard]] Result<std::vector<Row>> delete_registry_credential(const State& state,
                                                                  const DeleteRegistryCredential& c,
                                                                  TimeMs now_ms);

}  // namespace allot
