#include "store/codecs/identity.h"

#include "store/cluster_json.h"
#include "store/invoice_json.h"

namespace allot {
namespace {

// Empty: no billing details.
constexpr Column<Tenant> kDetailsColumn{
    .name = "billing_details",
    .write = [](const Tenant& o) -> DbValue { return billing_details_text(o.details); },
    .read = [](const DbValue& value, Tenant& o) -> Status {
      o.details = billing_details_from_text(db_text(value));
      return {};
    }};
constexpr auto kTenantColumns = join_tables(
    ALLOT_COLUMNS(Tenant, id, name, is_operator, created_at_ms, weight, credit_limit_micros,
                  exec_allowed),
    std::array{named_column<&Tenant::billing, billing_mode_name, parse_billing_mode>("billing"),
               kDetailsColumn});
constexpr ColumnCodec<Tenant> kTenants{
    .table = "tenants",
    .columns = kTenantColumns,
    .updated = "name, weight, billing, credit_limit_micros, billing_details, exec_allowed"};

// Empty: no idle-stop policy (every project written before migration 13).
constexpr Column<Project> kIdleColumn{
    .name = "idle",
    .write = [](const Project& o) -> DbValue {
      return o.idle ? idle_policy_document(*o.idle).dump() : std::string();
    },
    .read = [](const DbValue& value, Project& o) -> Status {
      const std::string idle = db_text(value);
      if (idle.empty()) return {};
      auto policy = idle_policy_from_document(nlohmann::json::parse(idle, nullptr, false));
      if (!policy) return std::unexpected(policy.error());
      o.idle = *policy;
      return {};
    }};
constexpr auto kProjectColumns =
    join_tables(ALLOT_COLUMNS(Project, id, tenant_id, name, created_at_ms, deleted_at_ms),
                std::array{kIdleColumn});
constexpr ColumnCodec<Project> kProjects{
    .table = "projects", .columns = kProjectColumns, .updated = "name, deleted_at_ms, idle"};

constexpr auto kUserColumns =
    join_tables(ALLOT_COLUMNS(User, id, tenant_id, name, email, disabled, created_at_ms),
                std::array{named_column<&User::role, role_name, parse_role>("role")});
constexpr ColumnCodec<User> kUsers{
    .table = "users", .columns = kUserColumns, .updated = "name, role, disabled"};

constexpr auto kApiKeyColumns = ALLOT_COLUMNS(ApiKey, id, user_id, tenant_id, name, prefix,
                                              token_hash, created_at_ms, revoked_at_ms);
constexpr ColumnCodec<ApiKey> kApiKeys{
    .table = "api_keys", .columns = kApiKeyColumns, .updated = "revoked_at_ms"};

}  // namespace

const ColumnCodec<Tenant>& codec_of(Tag<Tenant> /*tag*/) { return kTenants; }
const ColumnCodec<Project>& codec_of(Tag<Project> /*tag*/) { return kProjects; }
const ColumnCodec<User>& codec_of(Tag<User> /*tag*/) { return kUsers; }
const ColumnCodec<ApiKey>& codec_of(Tag<ApiKey> /*tag*/) { return kApiKeys; }

}  // namespace allot
