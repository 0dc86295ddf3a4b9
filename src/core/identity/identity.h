// The identity domain: tenants, their projects and users, and users' API keys. Its commands and
// rows are listed in core/model/identity_commands.h.
#pragma once

#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

[[nodiscard]] Handler<CreateTenant> apply;
[[nodiscard]] Handler<CreateProject> apply;
[[nodiscard]] Handler<DeleteProject> apply;
[[nodiscard]] Handler<CreateUser> apply;
// Changes the fields that are set; the last live operator admin cannot be demoted or disabled.
[[nodiscard]] Handler<UpdateUser> apply;
[[nodiscard]] Handler<CreateKey> apply;
// Revoking twice is harmless: the key stays revoked from the first time.
[[nodiscard]] Handler<RevokeKey> apply;

void put(State& state, const Tenant& tenant);
void put(State& state, const Project& project);
void put(State& state, const User& user);
void put(State& state, const ApiKey& key);

}  // namespace allot
