// Tables of the names of an enumeration's values: the stable names that are stored, sent and
// parsed. One table per enumeration keeps a value's name and its parsing in a single place.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace allot {

// The names of an enumeration whose values are 0, 1, ..., N - 1, listed in that order.
template <typename Enum, size_t N>
struct EnumNames {
  std::array<std::string_view, N> names;

  // The name of `value`; `fallback` for a value out of range (one cast from a bad integer).
  [[nodiscard]] constexpr std::string_view name(Enum value, std::string_view fallback) const {
    const auto index = static_cast<size_t>(value);
    return index < N ? names[index] : fallback;
  }

  // The value that `text` names, if any. An empty name marks a default that no one spells out
  // (no preference, say), so nothing parses from empty text.
  [[nodiscard]] constexpr std::optional<Enum> parse(std::string_view text) const {
    if (text.empty()) return std::nullopt;
    for (size_t i = 0; i < N; ++i) {
      if (names[i] == text) return static_cast<Enum>(i);
    }
    return std::nullopt;
  }
};

}  // namespace allot
