// The first start of a controller: the operator tenant, its first admin and that admin's key.
#pragma once

#include <optional>
#include <string>

#include "common/clock.h"
#include "common/random.h"
#include "core/core.h"
#include "store/store.h"

namespace allot {

// When no operator tenant exists, creates it with an operator admin "admin" and a key (`admin_key`
// if given, else a new one), writes them durably, and returns the new key's text to be shown once,
// or an empty text when the key was given. Returns nullopt when the operator tenant already
// exists.
[[nodiscard]] Result<std::optional<std::string>> bootstrap(Core& core, Store& store, IdSource& ids,
                                                           TimeMs now_ms,
                                                           const std::string& admin_key);

}  // namespace allot
