// Nodes for the core's tests: a join of GPUs of one model (8 unless said), as an agent would send
// it.
#pragma once

#include <string>
#include <vector>

#include "common/random.h"
#include "core/kernel/command.h"
#include "core/kernel/gpu_models.h"

namespace allot {

inline JoinNode gpu_join(const std::string& id, const std::string& name, const std::string& region,
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

inline JoinNode eight_gpu_join(const std::string& id, const std::string& name,
                               const std::string& region, const std::string& model,
                               const std::string& token_hash) {
  return gpu_join(id, name, region, model, token_hash, 8);
}

// A tenant ("acme") with one project ("p"), and a join token for its nodes.
inline std::vector<Command> one_tenant(const std::string& tenant, const std::string& project,
                                       const std::string& token_hash) {
  return {CreateTenant{tenant, "acme"}, CreateProject{project, tenant, "p"},
          CreateJoinToken{"jtk_0000000000000001", "rack", token_hash, 0}};
}

// What most of the core's tests start from: a tenant with one project ("p"), a join token, and one
// node of eight H100s in region eu (named "a") that has reported once.
inline std::vector<Command> one_node_cloud(const std::string& tenant, const std::string& project,
                                           const std::string& node, const std::string& token_hash) {
  std::vector<Command> out = one_tenant(tenant, project, token_hash);
  out.emplace_back(eight_gpu_join(node, "a", "eu", "H100-80GB", token_hash));
  out.emplace_back(NodeHeartbeat{.node_id = node});
  return out;
}

// Work is placed only where a price covers it. Tests of placement alone price every catalog model
// of `region` at 0 (an explicit free price) in every class, from `at_ms` on.
inline std::vector<Command> free_prices(const std::string& region, TimeMs at_ms) {
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
