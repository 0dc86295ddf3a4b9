#include "finance/asset.h"

#include "common/enum_names.h"

namespace allot::finance {

constexpr EnumNames<Method, 2> kMethodNames{{"straight_line", "declining_balance"}};
constexpr EnumNames<FinancingKind, 3> kFinancingKindNames{{"cash", "loan", "lease"}};

std::string_view method_name(Method method) { return kMethodNames.name(method, "straight_line"); }

std::optional<Method> parse_method(std::string_view name) { return kMethodNames.parse(name); }

std::string_view financing_kind_name(FinancingKind kind) {
  return kFinancingKindNames.name(kind, "cash");
}

std::optional<FinancingKind> parse_financing_kind(std::string_view name) {
  return kFinancingKindNames.parse(name);
}

}  // namespace allot::finance
