#include "core/cluster/test_nodes.h"

#include "common/random.h"

namespace allot {

JoinNode gpu_join(const std::string& id, const std::string& name, const std::string& region,
                  const std::string& model, const std::string& token_hash, int gpus) {
  JoinNode join{.node_id = id,
                .join_token_hash = token_hash,
                .credential_hash = sha256_hex(id),
                .name = name,
                .region = region,
                .cpu_milli = 64'000,
                .memory_mib = 512'000};
  for (int i = 0; i < gpus; ++i) {
    join.gpus.push_back(
        GpuReport{.index = i, .uuid = name + "-gpu-" + std::to_string(i), .model = model});
  }
  return join;
}

JoinNode eight_gpu_join(const std::string& id, const std::string& name, const std::string& region,
                        const std::string& model, const std::string& token_hash) {
  return gpu_join(id, name, region, model, token_hash, 8);
}

std::vector<Command> one_tenant(const std::string& tenant, const std::string& project,
                                const std::string& token_hash) {
  return {CreateTenant{tenant, "acme"}, CreateProject{project, tenant, "p"},
          CreateJoinToken{"jtk_0000000000000001", "rack", token_hash, 0}};
}

std::vector<Command> one_node_cloud(const std::string& tenant, const std::string& project,
                                    const std::string& node, const std::string& token_hash) {
  std::vector<Command> out = one_tenant(tenant, project, token_hash);
  out.emplace_back(eight_gpu_join(node, "a", "eu", "H100-80GB", token_hash));
  out.emplace_back(NodeHeartbeat{.node_id = node});
  return out;
}

std::vector<Command> free_prices(const std::string& region, TimeMs at_ms) {
  std::vector<Command> out;
  for (std::string_view model : catalog_gpu_models()) {
    for (PriceClass c : {PriceClass::kOnDemand, PriceClass::kSpot, PriceClass::kReserved}) {
      out.emplace_back(
          SetPrice{{.key = {.model = std::string(model), .region = region, .price_class = c},
                    .effective_ms = at_ms}});
    }
  }
  return out;
}

}  // namespace allot
