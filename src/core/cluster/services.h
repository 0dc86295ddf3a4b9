// Services (core/model/service.h): their settings and revisions, the autoscaler's decisions and
// the controller's account of rollouts. Replicas themselves are instances, made by CreateInstance
// with the service's id in their spec.
#pragma once

#include <string>
#include <vector>

#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

// - CreateService: adds the service with its first revision, rolling out, `desired` at
//   min_replicas. Refuses invalid_id, not_found (no live project in the tenant), invalid_argument
//   (a bad name, model, replica range, target, timer, port, readiness path or spec),
//   already_exists (a taken id, or a live service of the tenant with that name or model),
//   limit_exceeded (past limits::kMaxServicesPerTenant).
// - UpdateService: sets what is given; a revision unlike the current one becomes the next
//   (numbered on) and starts a rollout; the oldest revisions past limits::kServiceRevisionsKept
//   go, never the serving one. `desired` is kept within the new range. No rows where nothing
//   changes. Refuses not_found (no live service), invalid_argument, already_exists (a model
//   another live service of the tenant declares).
// - DeleteService: marks it deleted. Refuses not_found.
// - ScaleService: sets `desired` (0 only where it scales to zero or its minimum is 0), its
//   reason and time; no rows where it is unchanged. Refuses not_found and invalid_argument.
// - RecordServiceRollout: a finished rollout makes its revision the serving one; a failed one of
//   the current revision says why; restarts add up. No rows where nothing changes. Refuses
//   not_found (no live service, or no such revision) and invalid_argument (an unknown state).
// - CreateServiceKey: adds the key, its caller the service's tenant unless another is named.
//   Refuses invalid_id, not_found (no live service of the tenant, no caller tenant, another
//   tenant's key to a service that is not shared), invalid_argument (a bad name, or a hash that is
//   not 64 characters or is used), already_exists (a taken id), limit_exceeded (past
//   limits::kMaxServiceKeys live keys).
// - RevokeServiceKey: sets its revoked time; one already revoked is left as it is. Refuses
//   not_found.
ALLOT_HANDLERS(CreateService, UpdateService, DeleteService, ScaleService, RecordServiceRollout,
               CreateServiceKey, RevokeServiceKey);

void put(State& state, const HostedService& service);
void put(State& state, const ServiceKey& key);

// The tenant's live service of that name; null: none.
const HostedService* service_named(const State& state, const std::string& tenant_id,
                                   const std::string& name);
// The tenant's live service that declares `model`; null: none.
const HostedService* service_for_model(const State& state, const std::string& tenant_id,
                                       const std::string& model);
// The service's replicas that have not ended, in id order.
std::vector<const Instance*> live_replicas(const State& state, const std::string& service_id);

}  // namespace allot
