#include "api/wire/admission.h"

#include "api/wire/wire.h"
#include "common/money.h"
#include "common/price_class.h"
#include "store/cluster_json.h"

namespace allot {

nlohmann::json to_json(const Quota& q) {
  nlohmann::json out = pick(quota_document(q), {"id", "tenant_id", "project_id", "gpu_model",
                                                "gpu_milli", "created_at_ms", "deleted_at_ms"});
  out["created_at"] = format_time(q.created_at_ms);
  out["deleted_at"] = time_or_null(q.deleted_at_ms);
  return out;
}

nlohmann::json to_json(const Reservation& r) {
  nlohmann::json out =
      pick(reservation_document(r), {"id", "tenant_id", "gpu_model", "gpus", "starts_at_ms",
                                     "ends_at_ms", "created_at_ms", "cancelled_at_ms"});
  out["starts_at"] = format_time(r.starts_at_ms);
  out["ends_at"] = format_time(r.ends_at_ms);
  out["created_at"] = format_time(r.created_at_ms);
  out["cancelled_at"] = time_or_null(r.cancelled_at_ms);
  return out;
}

nlohmann::json to_json(const meter::Price& p, TimeMs at_ms) {
  if (p.key.storage()) {
    return {{"gpu_model", p.key.model},
            {"region", p.key.region},
            {"effective_at", format_time(p.effective_ms)},
            {"storage_gb_month", Money::from_micros(p.storage_gb_month_micros).to_string()},
            {"in_force", p.effective_ms <= at_ms}};
  }
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
