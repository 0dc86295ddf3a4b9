// The identity domain: tenants, their projects and users, and users' API keys. Its commands and
// rows are listed in core/model/identity_commands.h.
#pragma once

#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

[[nodiscard]] Result<Rows> apply(const State& state, const CreateTenant& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const CreateProject& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const DeleteProject& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const CreateUser& c, TimeMs now_ms,
                                 const Placing& placing);
// Changes the fields that are set; the last live operator admin cannot be demoted or disabled.
[[nodiscard]] Result<Rows> apply(const State& state, const UpdateUser& c, TimeMs now_ms,
                                 const Placing& placing);
[[nodiscard]] Result<Rows> apply(const State& state, const CreateKey& c, TimeMs now_ms,
                                 const Placing& placing);
// Revoking twice is harmless: the key stays revoked from the first time.
[[nodiscard]] Result<Rows> apply(const State& state, const RevokeKey& c, TimeMs now_ms,
                                 const Placing& placing);

void put(State& state, const Tenant& tenant);
void put(State& state, const Project& project);
void put(State& state, const User& user);
void put(State& state, const ApiKey& key);

}  // namespace allot
