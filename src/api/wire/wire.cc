#include "api/wire/wire.h"

#include <string>
#include <utility>

namespace allot {

nlohmann::json time_or_null(TimeMs at_ms) {
  return at_ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(format_time(at_ms));
}

nlohmann::json pick(nlohmann::json document, std::initializer_list<std::string_view> shown) {
  nlohmann::json out = nlohmann::json::object();
  for (std::string_view name : shown) {
    const std::string key(name);
    out[key] = std::move(document.at(key));
  }
  return out;
}

}  // namespace allot
