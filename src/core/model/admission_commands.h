// The admission domain's commands: quotas, reservations and tenants' fair-share weights.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/type_list.h"
#include "core/model/rules.h"

namespace allot {

// Sets the tenant's quota for (project, model), replacing the one there is; `id` is used when
// there is none.
struct SetQuota {
  std::string id;
  std::string tenant_id;
  std::string project_id;
  std::string gpu_model;
  int64_t gpu_milli = 0;
};

struct DeleteQuota {
  std::string id;
};

struct CreateReservation {
  std::string id;
  std::string tenant_id;
  std::string gpu_model;
  int gpus = 0;
  TimeMs starts_at_ms = 0;
  TimeMs ends_at_ms = 0;
};

struct CancelReservation {
  std::string id;
};

struct SetTenantWeight {
  std::string tenant_id;
  int64_t weight = 1;
};

// Whether a tenant's members may exec into its instances.
struct SetTenantExec {
  std::string tenant_id;
  bool allowed = true;
};

using AdmissionCommands = TypeList<SetQuota, DeleteQuota, CreateReservation, CancelReservation,
                                   SetTenantWeight, SetTenantExec>;
using AdmissionRows = TypeList<Quota, Reservation>;

}  // namespace allot
