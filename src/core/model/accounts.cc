#include "core/model/accounts.h"

#include <fmt/format.h>

namespace allot {

std::string tenant_account(const std::string& tenant_id, BillingMode mode) {
  return fmt::format("tenant/{}/{}", tenant_id, billing_mode_name(mode));
}

std::string earnings_account(const std::string& tenant_id) {
  return fmt::format("earnings/{}", tenant_id);
}

std::string credit_account(const std::string& tenant_id, const std::string& grant_id) {
  return fmt::format("tenant/{}/credit/{}", tenant_id, grant_id);
}

}  // namespace allot
