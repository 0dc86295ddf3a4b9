// What the API's wire forms share. Each object's wire form (api/wire/<domain>.h) names every field
// it shows: where it starts from the store's document of the object, it keeps only the fields it
// lists, so a field added to the store (a credential's hash, say) is never shown until a wire form
// names it.
#pragma once

#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/clock.h"

namespace allot {

// A time as the API writes it, or null for 0 (not yet, never).
nlohmann::json time_or_null(TimeMs at_ms);

// The fields of `document` named in `shown`, and no other, moved out of it. Every name must be in
// the document.
nlohmann::json pick(nlohmann::json document, std::initializer_list<std::string_view> shown);

}  // namespace allot
