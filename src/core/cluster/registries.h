// Setting and deleting tenants' registry credentials (core/model/registry.h).
#pragma once

#include "core/kernel/command.h"
#include "core/kernel/handler.h"
#include "core/kernel/row.h"
#include "core/kernel/state.h"

namespace allot {

// - SetRegistryCredential: adds or replaces the tenant's credential for the host. Refuses not_found
//   (unknown tenant), invalid_argument (malformed host; username empty, over 256 bytes or with ':'
//   or a line break; empty password), limit_exceeded (a new host past
//   limits::kMaxRegistryCredentials).
// - DeleteRegistryCredential: marks the credential deleted, its sealed password cleared. Refuses
//   not_found when the tenant has no credential for the host.
ALLOT_HANDLERS(SetRegistryCredential, DeleteRegistryCredential);

void put(State& state, const RegistryCredential& credential);

}  // namespace allot
