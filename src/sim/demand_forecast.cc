#include "sim/demand_forecast.h"

#include <algorithm>

#include "core/gpu_models.h"

namespace allot::sim {
namespace {

constexpr size_t kDayH = 24;
constexpr size_t kWeekDays = 7;

// Each hour forecast as the mean of the same hour of the day over the last week of history (as
// many days as there are): the daily cycle, with the noise of single days averaged away.
Result<std::vector<double>> same_hour_mean(std::span<const double> history, int horizon) {
  if (history.size() < 2 * kDayH || horizon < 1 || horizon > static_cast<int>(kDayH * 14)) {
    return fail(ErrorCode::kInvalidArgument,
                "the forecast needs 48 hours of history and a horizon of 1 to 336 hours");
  }
  const size_t days = std::min(kWeekDays, history.size() / kDayH);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(horizon));
  for (size_t h = 0; h < static_cast<size_t>(horizon); ++h) {
    double sum = 0;
    for (size_t d = 1; d <= days; ++d) {
      // The same hour of the day, d days before the hour forecast's day.
      sum += history[history.size() - (d * kDayH) + (h % kDayH)];
    }
    out.push_back(std::max(0.0, sum / static_cast<double>(days)));
  }
  return out;
}

bool counts_for(const Instance& instance, const std::string& model) {
  const auto& models = instance.spec.gpu_models;
  return models.empty() || std::any_of(models.begin(), models.end(), [&](const std::string& m) {
           return gpu_model_matches(m, model);
         });
}

}  // namespace

Predictor default_predictor() { return same_hour_mean; }

double demand_between(const State& state, const std::string& model, TimeMs from_ms, TimeMs to_ms,
                      TimeMs now_ms) {
  int64_t milli_ms = 0;
  for (const auto& [id, instance] : state.instances) {
    const TimeMs end = is_final(instance.state) ? instance.ended_at_ms : now_ms;
    const TimeMs overlap = std::min(end, to_ms) - std::max(instance.created_at_ms, from_ms);
    if (overlap <= 0 || !counts_for(instance, model)) continue;
    const int64_t milli = (int64_t{instance.spec.gpus} * 1000) + instance.spec.gpu_milli;
    milli_ms += milli * int64_t{instance.spec.nodes} * overlap;
  }
  return static_cast<double>(milli_ms) / 1000.0 / static_cast<double>(to_ms - from_ms);
}

}  // namespace allot::sim
