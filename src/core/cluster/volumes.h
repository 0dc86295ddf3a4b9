// Making and deleting volumes (core/model/volume.h), and what instances that mount them must
// respect: the owner, the region, one writer of a volume that is not shared, and the node of a
// local volume.
#pragma once

#include <optional>
#include <string>

#include "core/kernel/command.h"
#include "core/kernel/draft.h"
#include "core/kernel/handler.h"
#include "core/kernel/row.h"
#include "core/kernel/state.h"

namespace allot {

// - CreateVolume: refuses not_found (unknown tenant or project, or a project of another tenant),
//   invalid_argument (a malformed name or region, an unknown backend, a size out of 1 to
//   limits::kMaxVolumeGb), already_exists (the tenant has a live volume of that name),
//   limit_exceeded (past limits::kMaxVolumesPerTenant live volumes).
// - DeleteVolume: refuses not_found (no live volume of that id) and conflict (an instance that has
//   not ended mounts it).
ALLOT_HANDLERS(CreateVolume, DeleteVolume);

void put(State& state, const Volume& volume);

// Whether `spec`'s volume mounts may be made by `tenant_id`'s new instance: each volume live and
// the tenant's, its path absolute and inside no system directory, every volume in one region
// that `spec.regions` allows, a local volume's writers one at a time and never in a gang, the
// local volumes on one node. Refuses not_found, invalid_argument or conflict.
Status check_volume_mounts(const State& state, const std::string& tenant_id,
                           const InstanceSpec& spec);

// The node the instance must run on for its local volumes, as `draft` sees them (a volume takes
// the node of the first instance placed with it, in this command too); nullopt: any.
std::optional<std::string> volume_node(const Draft& draft, const Instance& instance);

// Binds the instance's unbound local volumes to the node it was just placed on.
void bind_volumes(Draft& draft, const Instance& instance);

// The live instances (not ended) that mount `volume_id`.
std::vector<const Instance*> instances_mounting(const State& state, const std::string& volume_id);

}  // namespace allot
