// The OpenAPI 3 description of the whole API (docs/openapi.json), built into allotd and served
// at /openapi.json.
#pragma once

#include <string_view>

namespace allot {

std::string_view openapi_document();

}  // namespace allot
