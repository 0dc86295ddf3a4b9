// Small builders for the scheduling tests.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sched/sched.h"

namespace allot::sched::testing {

// A node with one GPU per entry of `free_milli`, all of `model`, in `region`.
inline NodeView make_node(std::string id, std::vector<int> free_milli,
                          const std::string& model = "A100-80GB", int64_t free_cpu = 64000,
                          std::string region = "eu-1") {
  NodeView node{.id = std::move(id),
                .region = std::move(region),
                .cpu_milli = 64000,
                .memory_mib = 262144,
                .free_cpu_milli = free_cpu,
                .free_memory_mib = 262144};
  for (size_t i = 0; i < free_milli.size(); ++i) {
    node.gpus.push_back(GpuSlot{static_cast<int>(i), model, free_milli[i], true});
  }
  return node;
}

inline Request share(int milli, int64_t cpu = 1000) {
  return Request{.gpu_milli = milli, .cpu_milli = cpu, .memory_mib = 1024};
}

inline Request whole(int gpus, int64_t cpu = 1000) {
  return Request{.gpus = gpus, .cpu_milli = cpu, .memory_mib = 1024};
}

// The typical shapes of the worked fragmentation example in frag_test.cc.
inline CycleState worked_cycle() {
  CycleState cycle;
  cycle.typical.emplace_back(share(500, 4000), 0.5);
  cycle.typical.emplace_back(whole(1, 8000), 0.3);
  cycle.typical.emplace_back(whole(2, 40000), 0.2);
  return cycle;
}

// The policy `name` with the carbon score plugin added at `carbon_weight`; 0 leaves it off.
inline Result<std::unique_ptr<Policy>> make_policy_with_carbon(std::string_view name,
                                                               double carbon_weight) {
  std::vector<AddedScore> added;
  if (carbon_weight > 0) added.push_back({.plugin = "carbon", .weight = carbon_weight});
  return make_policy(name, added);
}

}  // namespace allot::sched::testing
