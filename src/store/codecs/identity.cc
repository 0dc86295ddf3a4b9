#include "store/codecs/identity.h"

#include "store/cluster_json.h"
#include "store/invoice_json.h"

namespace allot {
namespace {

constexpr std::string_view kUpsertTenant =
    "INSERT INTO tenants (id, name, is_operator, created_at_ms, weight, billing, "
    "credit_limit_micros, billing_details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, weight = excluded.weight, "
    "billing = excluded.billing, credit_limit_micros = excluded.credit_limit_micros, "
    "billing_details = excluded.billing_details";
constexpr std::string_view kUpsertProject =
    "INSERT INTO projects (id, tenant_id, name, created_at_ms, deleted_at_ms, idle) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, deleted_at_ms = excluded.deleted_at_ms, "
    "idle = excluded.idle";
constexpr std::string_view kUpsertUser =
    "INSERT INTO users (id, tenant_id, name, email, role, disabled, created_at_ms) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, role = excluded.role, "
    "disabled = excluded.disabled";
constexpr std::string_view kUpsertKey =
    "INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, token_hash, created_at_ms, "
    "revoked_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
    "ON CONFLICT (id) DO UPDATE SET revoked_at_ms = excluded.revoked_at_ms";

}  // namespace

Status write_row(Db& db, const Tenant& o) {
  const DbValue p[] = {o.id,
                       o.name,
                       int64_t{o.is_operator},
                       o.created_at_ms,
                       o.weight,
                       std::string(billing_mode_name(o.billing)),
                       o.credit_limit_micros,
                       billing_details_text(o.details)};
  return db.exec(kUpsertTenant, p);
}

Status load_rows(Db& db, Tag<Tenant> /*tag*/, std::vector<Row>& out) {
  return load_each(
      db,
      "SELECT id, name, is_operator, created_at_ms, weight, billing, credit_limit_micros, "
      "billing_details FROM tenants ORDER BY id",
      out, [](const DbRow& r) {
        return Tenant{.id = db_text(r[0]),
                      .name = db_text(r[1]),
                      .is_operator = db_int(r[2]) != 0,
                      .created_at_ms = db_int(r[3]),
                      .weight = db_int(r[4]),
                      .billing = parse_billing_mode(db_text(r[5])).value_or(BillingMode::kPostpaid),
                      .credit_limit_micros = db_int(r[6]),
                      .details = billing_details_from_text(db_text(r[7]))};
      });
}

Status write_row(Db& db, const Project& o) {
  const DbValue p[] = {o.id,
                       o.tenant_id,
                       o.name,
                       o.created_at_ms,
                       o.deleted_at_ms,
                       o.idle ? idle_policy_document(*o.idle).dump() : std::string()};
  return db.exec(kUpsertProject, p);
}

Status load_rows(Db& db, Tag<Project> /*tag*/, std::vector<Row>& out) {
  return load_each(
      db,
      "SELECT id, tenant_id, name, created_at_ms, deleted_at_ms, idle FROM projects ORDER BY id",
      out, [](const DbRow& r) -> Result<Project> {
        Project project{.id = db_text(r[0]),
                        .tenant_id = db_text(r[1]),
                        .name = db_text(r[2]),
                        .created_at_ms = db_int(r[3]),
                        .deleted_at_ms = db_int(r[4])};
        // Empty: no idle-stop policy (every project written before migration 13).
        if (const std::string idle = db_text(r[5]); !idle.empty()) {
          auto policy = idle_policy_from_document(nlohmann::json::parse(idle, nullptr, false));
          if (!policy) return std::unexpected(policy.error());
          project.idle = *policy;
        }
        return project;
      });
}

Status write_row(Db& db, const User& o) {
  const DbValue p[] = {o.id,
                       o.tenant_id,
                       o.name,
                       o.email,
                       std::string(role_name(o.role)),
                       int64_t{o.disabled},
                       o.created_at_ms};
  return db.exec(kUpsertUser, p);
}

Status load_rows(Db& db, Tag<User> /*tag*/, std::vector<Row>& out) {
  return load_each(
      db, "SELECT id, tenant_id, name, email, role, disabled, created_at_ms FROM users ORDER BY id",
      out, [](const DbRow& r) {
        return User{.id = db_text(r[0]),
                    .tenant_id = db_text(r[1]),
                    .name = db_text(r[2]),
                    .email = db_text(r[3]),
                    .role = parse_role(db_text(r[4])).value_or(Role::kViewer),
                    .disabled = db_int(r[5]) != 0,
                    .created_at_ms = db_int(r[6])};
      });
}

Status write_row(Db& db, const ApiKey& o) {
  const DbValue p[] = {o.id,     o.user_id,    o.tenant_id,     o.name,
                       o.prefix, o.token_hash, o.created_at_ms, o.revoked_at_ms};
  return db.exec(kUpsertKey, p);
}

Status load_rows(Db& db, Tag<ApiKey> /*tag*/, std::vector<Row>& out) {
  return load_each(
      db,
      "SELECT id, user_id, tenant_id, name, prefix, token_hash, created_at_ms, revoked_at_ms "
      "FROM api_keys ORDER BY id",
      out, [](const DbRow& r) {
        return ApiKey{.id = db_text(r[0]),
                      .user_id = db_text(r[1]),
                      .tenant_id = db_text(r[2]),
                      .name = db_text(r[3]),
                      .prefix = db_text(r[4]),
                      .token_hash = db_text(r[5]),
                      .created_at_ms = db_int(r[6]),
                      .revoked_at_ms = db_int(r[7])};
      });
}

}  // namespace allot
