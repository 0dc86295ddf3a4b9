#include "core/money/metering.h"

#include <algorithm>

namespace allot {

std::optional<Usage> usage_of(const State& state, const Instance& instance, TimeMs now_ms) {
  if (instance.started_at_ms == 0 || instance.gpu_indices.empty()) return std::nullopt;
  const Node* node = state.node(instance.node_id);
  if (node == nullptr) return std::nullopt;
  TimeMs end_ms = is_final(instance.state) ? instance.ended_at_ms : now_ms;
  if (instance.billing_cap_ms != 0) end_ms = std::min(end_ms, instance.billing_cap_ms);
  Usage usage{
      .key = {.model = node->gpus.at(static_cast<size_t>(instance.gpu_indices.front())).model,
              .region = node->region,
              .price_class = instance.spec.price_class},
      .milli =
          int64_t{instance.milli_per_gpu()} * static_cast<int64_t>(instance.gpu_indices.size()),
      .cpu_milli = instance.spec.cpu_milli,
      .memory_mib = instance.spec.memory_mib,
      .start_s = instance.started_at_ms / 1000,
      .end_s = std::max(instance.started_at_ms, end_ms) / 1000};
  return usage;
}

Result<int64_t> charge_of(const State& state, const Usage& usage) {
  return meter::usage_charge(state.prices, usage.key, usage.milli, usage.cpu_milli,
                             usage.memory_mib, usage.start_s, usage.end_s);
}

Result<int64_t> charge_between(const State& state, const Usage& usage, int64_t from_s,
                               int64_t to_s) {
  auto upto = [&](int64_t at_s) -> Result<int64_t> {
    Usage clipped = usage;
    clipped.end_s = std::clamp(at_s, usage.start_s, usage.end_s);
    return charge_of(state, clipped);
  };
  auto before = upto(from_s);
  if (!before) return before;
  auto after = upto(std::max(from_s, to_s));
  if (!after) return after;
  return *after - *before;
}

}  // namespace allot
