#include "api/routes/cluster.h"

namespace allot {

std::vector<Route> cluster_domain_routes() {
  return join_routes({node_routes(), agent_routes(), instance_routes(), registry_routes(),
                      image_routes(), idle_routes(), volume_routes(), service_routes(),
                      service_key_routes(), tunnel_routes()});
}

}  // namespace allot
