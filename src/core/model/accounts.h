// The ledger's account names: the operator's own accounts and each tenant's.
#pragma once

#include <string>
#include <string_view>

#include "core/model/identity.h"

namespace allot {

inline constexpr std::string_view kFundingAccount = "operator/funding";
inline constexpr std::string_view kPromotionsAccount = "operator/promotions";
inline constexpr std::string_view kRevenueAccount = "operator/revenue";

// The tenant's own account for its billing mode.
std::string tenant_account(const std::string& tenant_id, BillingMode mode);
// What a tenant's shared services earned from other tenants' calls: owed to it by the operator,
// and not spendable on its own work (outside the tenant's "tenant/ID/" accounts).
std::string earnings_account(const std::string& tenant_id);
// The account of one promotional credit.
std::string credit_account(const std::string& tenant_id, const std::string& grant_id);

}  // namespace allot
