// The identity objects the core keeps: tenants, their projects and users, and users' API keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/clock.h"
#include "core/model/idle_policy.h"

namespace allot {

// What a user may do. Operator admins run the whole cloud; the other roles act inside one tenant.
enum class Role { kOperatorAdmin, kTenantAdmin, kMember, kViewer };

std::string_view role_name(Role role);
std::optional<Role> parse_role(std::string_view name);

// How a tenant pays. Prepaid: from a balance topped up in advance, which never goes below zero.
// Postpaid: on invoice, owing at most its credit limit.
enum class BillingMode { kPostpaid, kPrepaid };

std::string_view billing_mode_name(BillingMode mode);
std::optional<BillingMode> parse_billing_mode(std::string_view name);

// What a tenant's invoices say about it as a customer: its legal name, postal address (lines
// separated by "\n"), tax id and the address invoices go to. Any may be empty.
struct BillingDetails {
  std::string legal_name;
  std::string address;
  std::string tax_id;
  std::string email;

  bool operator==(const BillingDetails&) const = default;
};

struct Tenant {
  std::string id;  // "ten_" + 16 hex
  std::string name;
  // The operator's own tenant holds the operator admins; there is exactly one.
  bool is_operator = false;
  TimeMs created_at_ms = 0;
  // Fair-share weight: the queue orders tenants by dominant share divided by this (1..1000).
  int64_t weight = 1;
  BillingMode billing = BillingMode::kPostpaid;
  // Postpaid: the most it may owe (running work stops there, new work waits); 0: no limit.
  int64_t credit_limit_micros = 0;
  BillingDetails details;
  // Whether its members may run commands and shells in its instances (exec, shell).
  bool exec_allowed = true;

  bool operator==(const Tenant&) const = default;
  // Whether its spending is bounded: prepaid, or postpaid with a credit limit.
  bool money_limited() const { return billing == BillingMode::kPrepaid || credit_limit_micros > 0; }
};

struct Project {
  std::string id;  // "prj_" + 16 hex
  std::string tenant_id;
  std::string name;
  TimeMs created_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0 while live; deleted projects stay for the books.
  // Applies to the project's instances that launch without a policy of their own; none: no idle
  // stop.
  std::optional<IdlePolicy> idle;

  bool operator==(const Project&) const = default;
};

struct User {
  std::string id;  // "usr_" + 16 hex
  std::string tenant_id;
  std::string name;
  std::string email;
  Role role = Role::kViewer;
  bool disabled = false;  // A disabled user's keys stop working.
  TimeMs created_at_ms = 0;

  bool operator==(const User&) const = default;
};

struct ApiKey {
  std::string id;  // "key_" + 16 hex
  std::string user_id;
  std::string tenant_id;
  std::string name;
  std::string prefix;      // The key's first characters, to tell keys apart in lists.
  std::string token_hash;  // SHA-256 of the whole key; the key itself is never stored.
  TimeMs created_at_ms = 0;
  TimeMs revoked_at_ms = 0;  // 0 while live.

  bool operator==(const ApiKey&) const = default;
};

}  // namespace allot
