// Whether quotas and reservations let an instance take GPUs, and of which models. Placement asks
// this first; the scheduler then sees the request narrowed to the models admitted.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "core/kernel/draft.h"
#include "core/kernel/handler.h"

namespace allot {

struct Admission {
  bool ok = true;
  // The models it may take, when the rules narrow its request; empty: its request as it is.
  std::vector<std::string> models;
  std::string why;  // Why it may not start now, when !ok.
};

// Now, with what the draft's instances hold: every live quota of its tenant (and project) must
// have room for it on a model; on-demand and reserved work must leave the GPUs that reservations
// in force still hold for other tenants; reserved work runs only within its tenant's own.
Admission admit(const Draft& draft, const Instance& instance, TimeMs now_ms);

// At creation: refuses work that no price covers where it may run (kNoPrice: its class, or for
// spot on-demand when the catalog falls back, on a model it accepts in a region it allows; a price
// that takes effect later counts), what no quota could ever admit (asks more than a limit), and
// reserved work of a tenant that holds no reservation, now or later, of a model it accepts.
Status check_admissible(const State& state, const std::string& tenant_id,
                        const std::string& project_id, const InstanceSpec& spec, TimeMs now_ms);

// GPU milli written as GPUs: 8000 -> "8", 2500 -> "2.5".
std::string gpus_text(int64_t milli);

// The rules' commands (rules.cc):
// - SetQuota: replaces the limit of the live quota of that tenant, project and model, else adds one
//   as `id`. Refuses not_found (no tenant, or no live project of it), invalid_argument (unknown
//   model, limit not 0 to 1,000,000 GPUs) and, when adding, limit_exceeded, invalid_id or
//   already_exists.
// - DeleteQuota: marks the live quota deleted (its row stays, for the books); not_found where there
//   is none.
// - CreateReservation: adds the reservation. Refuses invalid_id, not_found (no tenant),
//   invalid_argument (unknown model, gpus not 1 to 1,000,000, a window empty or over),
//   already_exists, limit_exceeded (the tenant's unended ones) and conflict (with those overlapping
//   it, more GPUs than the cluster has of them).
// - CancelReservation: marks the reservation cancelled, or not_found where there is none.
//   Cancelling twice is harmless: it stays cancelled from the first time.
// - SetTenantWeight: sets the tenant's fair-share weight. Refuses not_found (no tenant) and
//   invalid_argument (a weight not 1 to limits::kMaxTenantWeight).
// - SetTenantExec: lets the tenant's members exec into its instances, or not. Refuses not_found
//   (no tenant).
ALLOT_HANDLERS(SetQuota, DeleteQuota, CreateReservation, CancelReservation, SetTenantWeight,
               SetTenantExec);

void put(State& state, const Quota& quota);
void put(State& state, const Reservation& reservation);

}  // namespace allot
