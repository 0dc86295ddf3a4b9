// What bounds the GPUs a tenant may hold: quotas (hard limits per tenant or project, optionally
// per model) and reservations (GPUs of a model held for one tenant over a time window).
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"

namespace allot {

// At most `gpu_milli` GPU milli (8 GPUs = 8000) held at once by the tenant's instances, or by one
// project's when project_id is set, on GPUs of `gpu_model` (a model or family) or of any model.
struct Quota {
  std::string id;  // "quo_" + 16 hex
  std::string tenant_id;
  std::string project_id;  // Empty: the whole tenant.
  std::string gpu_model;   // Empty: every model.
  int64_t gpu_milli = 0;
  TimeMs created_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0 while it applies.

  bool operator==(const Quota&) const = default;
  bool live() const { return deleted_at_ms == 0; }
};

// `gpus` GPUs of `gpu_model` held for the tenant from starts_at_ms to ends_at_ms. While it is in
// force, other tenants may use those GPUs only as spot work, which the holder's work preempts.
struct Reservation {
  std::string id;  // "rsv_" + 16 hex
  std::string tenant_id;
  std::string gpu_model;  // A catalog model, e.g. "H100-80GB".
  int gpus = 0;
  TimeMs starts_at_ms = 0;
  TimeMs ends_at_ms = 0;
  TimeMs created_at_ms = 0;
  TimeMs cancelled_at_ms = 0;  // 0 unless cancelled.

  bool operator==(const Reservation&) const = default;
  bool in_force(TimeMs now_ms) const {
    return cancelled_at_ms == 0 && starts_at_ms <= now_ms && now_ms < ends_at_ms;
  }
};

}  // namespace allot
