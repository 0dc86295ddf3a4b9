#include "sim/demand_forecast.h"

#include <algorithm>

#include "core/pools/demand.h"
#include "forecast/forecast.h"

namespace allot::sim {

Predictor default_predictor() { return forecast::predict; }

double demand_between(const State& state, const std::string& model, TimeMs from_ms, TimeMs to_ms,
                      TimeMs now_ms) {
  int64_t milli_ms = 0;
  for (const auto& [id, instance] : state.instances) {
    const TimeMs end = is_final(instance.state) ? instance.ended_at_ms : now_ms;
    const TimeMs overlap = std::min(end, to_ms) - std::max(instance.created_at_ms, from_ms);
    if (overlap <= 0 || !demands_model(instance, model)) continue;
    const int64_t milli = (int64_t{instance.spec.gpus} * 1000) + instance.spec.gpu_milli;
    milli_ms += milli * int64_t{instance.spec.nodes} * overlap;
  }
  return static_cast<double>(milli_ms) / 1000.0 / static_cast<double>(to_ms - from_ms);
}

}  // namespace allot::sim
