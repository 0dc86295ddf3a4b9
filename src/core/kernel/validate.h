// Checks on the text fields of commands, shared by the core and the API.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/error.h"

namespace allot {

// A name: 1..limits::kMaxNameBytes bytes, no control characters, no leading or trailing space.
[[nodiscard]] Status check_name(std::string_view field, std::string_view name);

// A name that goes in paths and on command lines (volumes, templates, NFS regions): 1 to `most`
// lowercase letters, digits, '-', '_' and '.', starting with a letter or digit.
[[nodiscard]] bool is_plain_name(std::string_view name, size_t most);

// An e-mail address of plain form: something@domain, no spaces, within RFC 5321's length.
[[nodiscard]] Status check_email(std::string_view email);

// An id of the given prefix, as random.h describes.
[[nodiscard]] Status check_id(std::string_view field, std::string_view id, std::string_view prefix);

// A caller's idempotency key (a top-up's id, a launch's Idempotency-Key): 1 to
// limits::kMaxIdempotencyKeyBytes letters, digits, '-', '_', '.' or ':'.
[[nodiscard]] Status check_idempotency_key(std::string_view what, std::string_view key);

}  // namespace allot
