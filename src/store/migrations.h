// The schema, as numbered migrations. A migration is never edited once released: a change is a new
// migration at the end. Both backends run the same SQL, so it keeps to what both accept.
#pragma once

#include <span>
#include <string_view>

namespace allot {

struct Migration {
  int version;
  std::string_view description;
  std::span<const std::string_view> statements;
};

std::span<const Migration> migrations();

}  // namespace allot
