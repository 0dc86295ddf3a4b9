#include "finance/asset.h"

namespace allot::finance {

std::string_view method_name(Method method) {
  switch (method) {
    case Method::kStraightLine:
      return "straight_line";
    case Method::kDecliningBalance:
      return "declining_balance";
  }
  return "straight_line";
}

std::optional<Method> parse_method(std::string_view name) {
  if (name == "straight_line") return Method::kStraightLine;
  if (name == "declining_balance") return Method::kDecliningBalance;
  return std::nullopt;
}

std::string_view financing_kind_name(FinancingKind kind) {
  switch (kind) {
    case FinancingKind::kCash:
      return "cash";
    case FinancingKind::kLoan:
      return "loan";
    case FinancingKind::kLease:
      return "lease";
  }
  return "cash";
}

std::optional<FinancingKind> parse_financing_kind(std::string_view name) {
  if (name == "cash") return FinancingKind::kCash;
  if (name == "loan") return FinancingKind::kLoan;
  if (name == "lease") return FinancingKind::kLease;
  return std::nullopt;
}

}  // namespace allot::finance
