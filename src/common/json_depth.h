// JSON from outside, parsed only when its nesting is shallow: nlohmann::json parses without
// recursion, but copies, compares and writes values recursively, so a body of a hundred thousand
// nested arrays (200 KB, well under the body limit) would overflow a thread's stack later.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace allot {

// Arrays and objects within each other, at most: far beyond any route's body or agent report.
inline constexpr int kMaxJsonDepth = 64;

// Whether `text` nests arrays and objects more than `depth` deep (brackets in strings do not
// count). One pass, no allocation.
bool json_deeper_than(std::string_view text, int depth);

// The document, or a discarded value (is_discarded()) when `text` is not JSON or nests deeper
// than kMaxJsonDepth.
nlohmann::json parse_outside_json(std::string_view text);

}  // namespace allot
