// Nodes for the core's tests: a join of 8 GPUs of one model, as an agent would send it.
#pragma once

#include <string>

#include "common/random.h"
#include "core/command.h"

namespace allot {

inline JoinNode eight_gpu_join(const std::string& id, const std::string& name,
                               const std::string& region, const std::string& model,
                               const std::string& token_hash) {
  JoinNode join{.node_id = id,
                .join_token_hash = token_hash,
                .credential_hash = sha256_hex(id),
                .name = name,
                .region = region,
                .cpu_milli = 64'000,
                .memory_mib = 512'000};
  for (int i = 0; i < 8; ++i) {
    join.gpus.push_back(
        GpuReport{.index = i, .uuid = name + "-gpu-" + std::to_string(i), .model = model});
  }
  return join;
}

}  // namespace allot
