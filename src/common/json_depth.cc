#include "common/json_depth.h"

namespace allot {

bool json_deeper_than(std::string_view text, int depth) {
  int open = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++open > depth) return true;
    } else if ((c == ']' || c == '}') && open > 0) {
      --open;
    }
  }
  return false;
}

nlohmann::json parse_outside_json(std::string_view text) {
  if (json_deeper_than(text, kMaxJsonDepth))
    return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace allot
