// A small pool to burst into: up to two nodes of two H100s each in region eu, made by the local
// provider. The pool tests and `allot sim chaos` both use it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/model/pool.h"

namespace allot {

inline Pool burst_pool(std::string id, int64_t cooldown_ms) {
  return Pool{.id = std::move(id),
              .name = "burst",
              .gpu_model = "H100-80GB",
              .region = "eu",
              .min_nodes = 0,
              .max_nodes = 2,
              .provider = PoolProvider::kLocal,
              .gpus_per_node = 2,
              .cpu_milli = 16'000,
              .memory_mib = 131'072,
              .boot_timeout_ms = 60'000,
              .idle_timeout_ms = 120'000,
              .cooldown_ms = cooldown_ms};
}

}  // namespace allot
