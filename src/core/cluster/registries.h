// Setting and deleting tenants' registry credentials (core/model/registry.h).
#pragma once

#include "core/kernel/command.h"
#include "core/kernel/handler.h"
#include "core/kernel/row.h"
#include "core/kernel/state.h"

namespace allot {

// kNotFound for an unknown tenant; kInvalidArgument for a malformed host or an empty username,
// password or one with a line break; kLimitExceeded past limits::kMaxRegistryCredentials.
[[nodiscard]] Handler<SetRegistryCredential> apply;
// kNotFound when the tenant has no credential for the host.
[[nodiscard]] Handler<DeleteRegistryCredential> apply;

void put(State& state, const RegistryCredential& credential);

}  // namespace allot
