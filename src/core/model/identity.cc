#include "core/model/identity.h"

namespace allot {

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kOperatorAdmin:
      return "operator-admin";
    case Role::kTenantAdmin:
      return "tenant-admin";
    case Role::kMember:
      return "member";
    case Role::kViewer:
      return "viewer";
  }
  return "viewer";
}

std::string_view billing_mode_name(BillingMode mode) {
  return mode == BillingMode::kPrepaid ? "prepaid" : "postpaid";
}

std::optional<BillingMode> parse_billing_mode(std::string_view name) {
  for (BillingMode mode : {BillingMode::kPostpaid, BillingMode::kPrepaid}) {
    if (billing_mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

std::optional<Role> parse_role(std::string_view name) {
  for (Role role : {Role::kOperatorAdmin, Role::kTenantAdmin, Role::kMember, Role::kViewer}) {
    if (role_name(role) == name) return role;
  }
  return std::nullopt;
}

}  // namespace allot
