// Lists of types, for the commands and rows each domain declares: the core's Command and Row
// variants are the concatenation of the domains' lists.
#pragma once

#include <variant>

namespace allot {

template <typename... Ts>
struct TypeList {};

template <typename... Lists>
struct Concat;

template <typename... Ts>
struct Concat<TypeList<Ts...>> {
  using type = TypeList<Ts...>;
};

template <typename... As, typename... Bs, typename... Rest>
struct Concat<TypeList<As...>, TypeList<Bs...>, Rest...> : Concat<TypeList<As..., Bs...>, Rest...> {
};

template <typename List>
struct VariantOf;

template <typename... Ts>
struct VariantOf<TypeList<Ts...>> {
  using type = std::variant<Ts...>;
};

// Calls `f.template operator()<T>()` for each type of the list, in order.
template <typename... Ts, typename F>
void for_each_type(TypeList<Ts...> /*list*/, F&& f) {
  (f.template operator()<Ts>(), ...);
}

}  // namespace allot
