// Percent-encoding (RFC 3986) of a query value, so that any text, spaces and newlines included,
// travels in a request target; api/request.h decodes it.
#pragma once

#include <string>
#include <string_view>

namespace allot {

// Every byte but the unreserved ones (letters, digits, - . _ ~) as %XX.
std::string percent_encode(std::string_view text);

}  // namespace allot
