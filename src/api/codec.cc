#include "api/codec.h"

#include <limits>

#include "billing/invoice_render.h"
#include "common/money.h"
#include "store/cluster_json.h"

namespace allot {

nlohmann::json time_or_null(TimeMs at_ms) {
  return at_ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(format_time(at_ms));
}

nlohmann::json to_json(const BillingDetails& d) {
  return {{"legal_name", d.legal_name},
          {"address", d.address},
          {"tax_id", d.tax_id},
          {"email", d.email}};
}

nlohmann::json to_json(const Tenant& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"is_operator", t.is_operator},
          {"weight", t.weight},
          {"billing", billing_mode_name(t.billing)},
          {"credit_limit", Money::from_micros(t.credit_limit_micros).to_string()},
          {"billing_details", to_json(t.details)},
          {"created_at", format_time(t.created_at_ms)}};
}

nlohmann::json to_json(const Project& p) {
  return {{"id", p.id},
          {"tenant_id", p.tenant_id},
          {"name", p.name},
          {"created_at", format_time(p.created_at_ms)},
          {"deleted_at", time_or_null(p.deleted_at_ms)},
          {"idle", p.idle ? idle_policy_document(*p.idle) : nlohmann::json(nullptr)}};
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

nlohmann::json to_json(const Node& n) {
  nlohmann::json out = node_document(n);
  out.erase("credential_hash");
  // A node's images are listed by GET /v1/images, not with every node.
  out.erase("images");
  out.erase("image_store");
  out.erase("images_at_ms");
  out["state"] = node_state_name(n.state());
  out["joined_at"] = format_time(n.joined_at_ms);
  out["last_heartbeat_at"] = time_or_null(n.last_heartbeat_ms);
  out["deleted_at"] = time_or_null(n.deleted_at_ms);
  return out;
}

nlohmann::json to_json(const Instance& i) {
  nlohmann::json out = instance_document(i);
  out["created_at"] = format_time(i.created_at_ms);
  out["started_at"] = time_or_null(i.started_at_ms);
  out["ended_at"] = time_or_null(i.ended_at_ms);
  out["idle_since"] = time_or_null(i.idle_since_ms);
  out["billed"] = Money::from_micros(i.billed_micros).to_string();
  const EnergyUse energy = i.energy_between(0, std::numeric_limits<TimeMs>::max());
  out["energy_kwh"] = billing::energy_kwh_text(energy.energy_mj);
  out["carbon_kg"] = billing::carbon_kg_text(energy.carbon_ug);
  for (auto& event : out["events"]) event["at"] = format_time(event["at_ms"].get<TimeMs>());
  return out;
}

nlohmann::json to_json(const Quota& q) {
  nlohmann::json out = quota_document(q);
  out["created_at"] = format_time(q.created_at_ms);
  out["deleted_at"] = time_or_null(q.deleted_at_ms);
  return out;
}

nlohmann::json to_json(const Reservation& r) {
  nlohmann::json out = reservation_document(r);
  out["starts_at"] = format_time(r.starts_at_ms);
  out["ends_at"] = format_time(r.ends_at_ms);
  out["created_at"] = format_time(r.created_at_ms);
  out["cancelled_at"] = time_or_null(r.cancelled_at_ms);
  return out;
}

nlohmann::json to_json(const meter::Price& p, TimeMs at_ms) {
  return {{"gpu_model", p.key.model},
          {"region", p.key.region},
          {"price_class", price_class_name(p.key.price_class)},
          {"effective_at", format_time(p.effective_ms)},
          {"gpu_hour", Money::from_micros(p.gpu_hour_micros).to_string()},
          {"cpu_hour", Money::from_micros(p.cpu_hour_micros).to_string()},
          {"memory_gib_hour", Money::from_micros(p.memory_gib_hour_micros).to_string()},
          {"in_force", p.effective_ms <= at_ms}};
}

}  // namespace allot
