// A small state for billing's tests: one tenant with projects, one node per region of 8 GPUs of
// one model, instances that ran over given times, and prices. Built directly, as the store would
// load it, so that every test says exactly what ran when.
#pragma once

#include <string>

#include "common/clock.h"
#include "core/kernel/state.h"

namespace allot::billing::testing {

inline const std::string kTenant = "ten_0000000000000001";
inline const std::string kOther = "ten_0000000000000002";
inline const std::string kVision = "prj_0000000000000001";
inline const std::string kSpeech = "prj_0000000000000002";
inline const std::string kNode = "nod_0000000000000001";
inline constexpr int64_t kUnit = 1'000'000;  // One currency unit in micro-units.

inline TimeMs at(const char* rfc3339) { return *parse_time(rfc3339); }

inline State base_state() {
  State state;
  state.put(Tenant{.id = kTenant, .name = "acme <&> \"co\""});
  state.put(Tenant{.id = kOther, .name = "globex"});
  state.put(Project{.id = kVision, .tenant_id = kTenant, .name = "vision, \"main\""});
  state.put(Project{.id = kSpeech, .tenant_id = kTenant, .name = "=speech"});
  Node node{.id = kNode, .name = "n1", .region = "eu"};
  for (int i = 0; i < 8; ++i) node.gpus.push_back(Gpu{.index = i, .model = "H100-80GB"});
  state.put(node);
  return state;
}

inline void add_price(State& state, int64_t gpu_hour_micros, TimeMs effective_ms,
                      PriceClass price_class = PriceClass::kOnDemand) {
  state.put(meter::Price{.key = {.model = "H100-80GB", .region = "eu", .price_class = price_class},
                         .effective_ms = effective_ms,
                         .gpu_hour_micros = gpu_hour_micros});
}

// An instance of `gpus` whole GPUs (or `milli` of one when gpus is 0) that ran from start to end
// (end 0: still running).
inline Instance ran(const std::string& id, const std::string& tenant, const std::string& project,
                    int gpus, int milli, TimeMs start_ms, TimeMs end_ms,
                    PriceClass price_class = PriceClass::kOnDemand) {
  Instance instance{.id = id,
                    .tenant_id = tenant,
                    .project_id = project,
                    .spec = {.gpus = gpus, .gpu_milli = milli, .price_class = price_class},
                    .state = end_ms == 0 ? InstanceState::kRunning : InstanceState::kSucceeded,
                    .node_id = kNode,
                    .started_at_ms = start_ms,
                    .ended_at_ms = end_ms};
  for (int i = 0; i < std::max(gpus, 1); ++i) instance.gpu_indices.push_back(i);
  return instance;
}

}  // namespace allot::billing::testing
