#include "core/model/identity.h"

#include "common/enum_names.h"

namespace allot {

constexpr EnumNames<Role, 4> kRoleNames{{"operator-admin", "tenant-admin", "member", "viewer"}};
constexpr EnumNames<BillingMode, 2> kBillingModeNames{{"postpaid", "prepaid"}};

std::string_view role_name(Role role) { return kRoleNames.name(role, "viewer"); }

std::string_view billing_mode_name(BillingMode mode) {
  return kBillingModeNames.name(mode, "postpaid");
}

std::optional<BillingMode> parse_billing_mode(std::string_view name) {
  return kBillingModeNames.parse(name);
}

std::optional<Role> parse_role(std::string_view name) { return kRoleNames.parse(name); }

}  // namespace allot
