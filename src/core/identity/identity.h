// The identity domain: tenants, their projects and users, and users' API keys. Its commands and
// rows are listed in core/model/identity_commands.h.
#pragma once

#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

// - CreateTenant: adds the tenant, the operator's where is_operator. Refuses invalid_id,
//   invalid_argument (bad name), already_exists (id or name taken, or a second operator tenant) and
//   limit_exceeded (the cloud holds the most tenants it may).
// - CreateProject: adds the project to the tenant. Refuses invalid_id, invalid_argument (bad name),
//   not_found (no tenant), already_exists (id ever used, or a live project of the tenant has the
//   name) and limit_exceeded (the tenant holds the most live projects it may).
// - DeleteProject: marks the live project deleted (its row stays, for the books); not_found where
//   there is none.
// - CreateUser: adds the user to the tenant with its role. Refuses invalid_id, invalid_argument
//   (bad name or e-mail, or an operator admin outside the operator tenant), not_found (no tenant),
//   already_exists (id taken, or the e-mail in the tenant) and limit_exceeded (the tenant's users,
//   disabled too).
// - UpdateUser: changes the fields that are set (no rows where nothing changes). Refuses not_found
//   (no user), invalid_argument (bad name, or an operator admin outside the operator tenant) and
//   conflict: the last live operator admin cannot be demoted or disabled.
// - CreateKey: adds the user's API key, in the user's tenant. Refuses invalid_id, invalid_argument
//   (bad name, a hash not 64 characters), not_found (no user), conflict (the user is disabled),
//   already_exists (id or hash taken) and limit_exceeded (the user holds the most unrevoked keys it
//   may).
// - RevokeKey: marks the key revoked, or not_found where there is none. Revoking twice is harmless:
//   the key stays revoked from the first time.
ALLOT_HANDLERS(CreateTenant, CreateProject, DeleteProject, CreateUser, UpdateUser, CreateKey,
               RevokeKey);

void put(State& state, const Tenant& tenant);
void put(State& state, const Project& project);
void put(State& state, const User& user);
void put(State& state, const ApiKey& key);

}  // namespace allot
