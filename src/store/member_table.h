// Tables of a row's members, each with the name it is stored under (a document's key, a table's
// column), shared by store/document_fields.h and store/codecs/columns.h. Where a member's stored
// name is its own name, ALLOT_MEMBER_TABLE lists it once, as nlohmann's field-list macro does.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include <nlohmann/json.hpp>

namespace allot {

template <typename M>
struct MemberOf;
template <typename C, typename V>
struct MemberOf<V C::*> {
  using Class = C;
  using Value = V;
};

// The member at the end of a path of member pointers: object.*First.*Rest...
template <auto First, auto... Rest>
constexpr auto& member_at(auto& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*First;
  } else {
    return member_at<Rest...>(object.*First);
  }
}

// One table of the entries of several, in order.
template <typename T, size_t... N>
constexpr std::array<T, (N + ...)> join_tables(const std::array<T, N>&... tables) {
  std::array<T, (N + ...)> out{};
  auto next = out.begin();
  ((next = std::ranges::copy(tables, next).out), ...);
  return out;
}

}  // namespace allot

// A std::array of `entry(member)` for each member of Type, where `entry` names the member as
// &AllotRow::member (AllotRow is Type) and ends with a comma. It repeats `entry` as nlohmann's
// field-list macro does, with NLOHMANN_JSON_PASTE.
#define ALLOT_MEMBER_TABLE(Type, entry, ...)                                          \
  [] {                                                                                \
    using AllotRow = Type;                                                            \
    return std::array{NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(entry, __VA_ARGS__))}; \
  }()
