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

// A value and its name, for tables whose values are not simply 0, 1, ... in order.
template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

// The name of `value` in `table`; `fallback` for a value the table lacks (one cast from a bad
// integer).
template <typename Table, typename Enum>
[[nodiscard]] constexpr std::string_view name_in(const Table& table, Enum value,
                                                 std::string_view fallback) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

// The value that `name` names in `table`, if any.
template <typename Table>
[[nodiscard]] constexpr auto parse_in(const Table& table, std::string_view name)
    -> std::optional<decltype(table.begin()->value)> {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace allot
