#include "forecast/forecast.h"
#include "forecast/validate.h"

namespace allot::forecast {

Result<std::vector<double>> naive_daily(std::span<const double> history, int horizon) {
  if (Status valid = check_history(history, kSeasonHours); !valid) {
    return std::unexpected(valid.error());
  }
  if (Status valid = check_horizon(horizon); !valid) return std::unexpected(valid.error());
  const std::span<const double> yesterday = history.last(kSeasonHours);
  std::vector<double> forecast;
  forecast.reserve(static_cast<size_t>(horizon));
  for (int ahead = 0; ahead < horizon; ++ahead) forecast.push_back(yesterday[ahead % kSeasonHours]);
  return forecast;
}

}  // namespace allot::forecast
