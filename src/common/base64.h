// Base64 (RFC 4648, with padding), for carrying raw bytes such as log output inside JSON.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"

namespace allot {

std::string base64_encode(std::string_view bytes);
// Fails with kInvalidArgument on text that is not base64.
[[nodiscard]] Result<std::string> base64_decode(std::string_view text);

}  // namespace allot
