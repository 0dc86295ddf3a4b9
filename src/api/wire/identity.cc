#include "api/wire/identity.h"

#include "api/wire/cluster.h"
#include "api/wire/wire.h"
#include "common/money.h"

namespace allot {

nlohmann::json to_json(const BillingDetails& d) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, member] : kBillingDetailsFields) out[name] = d.*member;
  return out;
}

nlohmann::json to_json(const Tenant& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"is_operator", t.is_operator},
          {"weight", t.weight},
          {"billing", billing_mode_name(t.billing)},
          {"credit_limit", Money::from_micros(t.credit_limit_micros).to_string()},
          {"billing_details", to_json(t.details)},
          {"exec", t.exec_allowed},
          {"created_at", format_time(t.created_at_ms)}};
}

nlohmann::json to_json(const Project& p) {
  return {{"id", p.id},
          {"tenant_id", p.tenant_id},
          {"name", p.name},
          {"created_at", format_time(p.created_at_ms)},
          {"deleted_at", time_or_null(p.deleted_at_ms)},
          {"idle", p.idle ? to_json(*p.idle) : nlohmann::json(nullptr)}};
}

nlohmann::json to_json(const User& u) {
  return {{"id", u.id},
          {"tenant_id", u.tenant_id},
          {"name", u.name},
          {"email", u.email},
          {"role", role_name(u.role)},
          {"disabled", u.disabled},
          {"created_at", format_time(u.created_at_ms)}};
}

nlohmann::json to_json(const ApiKey& k) {
  return {{"id", k.id},
          {"user_id", k.user_id},
          {"tenant_id", k.tenant_id},
          {"name", k.name},
          {"prefix", k.prefix},
          {"created_at", format_time(k.created_at_ms)},
          {"revoked_at", time_or_null(k.revoked_at_ms)}};
}

nlohmann::json to_json(const AuditEntry& e) {
  return {{"seq", e.seq},
          {"at", format_time(e.at_ms)},
          {"tenant_id", e.tenant_id},
          {"user_id", e.user_id},
          {"key_id", e.key_id},
          {"method", e.method},
          {"path", e.path},
          {"target_id", e.target_id},
          {"status", e.status},
          {"error_code",
           e.error_code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.error_code)}};
}

nlohmann::json to_json(const JoinToken& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"created_at", format_time(t.created_at_ms)},
          {"expires_at", time_or_null(t.expires_at_ms)},
          {"revoked_at", time_or_null(t.revoked_at_ms)}};
}

}  // namespace allot
