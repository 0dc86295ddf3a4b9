// The cluster domain's routes: join tokens and nodes, the agents' calls, instances, idle-stop
// policies, registry credentials, images, volumes. Each resource's file holds its routes; the
// domain's list, in the order they are matched, is cluster_domain_routes() (api/routes/cluster.cc).
#pragma once

#include <span>
#include <vector>

#include "api/app.h"

namespace allot {

std::span<const Route> node_routes();
// The agents' own calls: join, heartbeat, work and logs.
std::span<const Route> agent_routes();
std::span<const Route> instance_routes();
// Tenants' credentials for private image registries.
std::span<const Route> registry_routes();
// Tenants' volumes.
std::span<const Route> volume_routes();
// A launch's mounts with their volumes found by name (or id) among the tenant's live volumes:
// volume_id set, name the volume's. kNotFound for one the tenant does not have.
[[nodiscard]] Result<std::vector<VolumeMount>> resolve_volumes(const Call& call,
                                                               const std::string& tenant_id,
                                                               std::vector<VolumeMount> mounts);
// Tenants' services: endpoints served over replicas.
std::span<const Route> service_routes();
// The service a caller names by id, or by name: its own tenant's of that name, else another
// tenant's live shared service of that name (kConflict, naming their ids, when several tenants'
// share it). nullptr when there is none; what the caller may do with it is the route's to say.
[[nodiscard]] Result<const HostedService*> service_by_key(const Call& call, const std::string& key);
// Services' keys, for their own tenant's customers and for other tenants' callers; margins.
std::span<const Route> service_key_routes();
std::span<const Route> image_routes();
// The nodes' tunnels, port-forwards and the list of an instance's published ports.
std::span<const Route> tunnel_routes();
// A project's idle-stop policy.
std::span<const Route> idle_routes();

std::vector<Route> cluster_domain_routes();

}  // namespace allot
