#include "daemon/prescale.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/pools/demand.h"
#include "forecast/forecast.h"

namespace allot {

// The forecast needs two whole days: one to find the daily season and one to check it.
constexpr size_t kLeastHistoryH = 48;

DemandHistory demand_history(const State& state, TimeMs now_ms, int history_h) {
  DemandHistory history{.hour_ms = now_ms - (now_ms % kHourMs)};
  const TimeMs first = first_demand_ms(state);
  if (first == 0) return history;
  const TimeMs from =
      std::max(first - (first % kHourMs), history.hour_ms - (int64_t{history_h} * kHourMs));
  const auto hours = static_cast<int>((history.hour_ms - from) / kHourMs);
  for (const auto& [id, pool] : state.pools) {
    if (pool.deleted() || history.by_model.contains(pool.gpu_model)) continue;
    history.by_model[pool.gpu_model] = hourly_demand(state, pool.gpu_model, from, hours, now_ms);
  }
  return history;
}

std::map<std::string, double> forecast_peaks(const DemandHistory& history, int lead_h,
                                             std::vector<std::string>& errors) {
  std::map<std::string, double> peaks;
  for (const auto& [model, hours] : history.by_model) {
    if (hours.size() < kLeastHistoryH) continue;
    auto forecast = forecast::predict(hours, lead_h);
    if (!forecast) {
      errors.push_back(fmt::format("forecast of {}: {}", model, forecast.error().message));
      continue;
    }
    peaks[model] = *std::max_element(forecast->begin(), forecast->end());
  }
  return peaks;
}

}  // namespace allot
