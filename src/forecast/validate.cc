#include "forecast/validate.h"

#include <cmath>

#include <fmt/format.h>

#include "forecast/forecast.h"

namespace allot::forecast {

Status check_history(std::span<const double> history, int min_hours) {
  if (history.size() < static_cast<size_t>(min_hours)) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("history has {} hours; at least {} are needed", history.size(), min_hours));
  }
  for (size_t hour = 0; hour < history.size(); ++hour) {
    if (!std::isfinite(history[hour]) || history[hour] < 0) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("history hour {} is {}; want a finite number not below 0", hour,
                              history[hour]));
    }
  }
  return {};
}

Status check_horizon(int horizon) {
  if (horizon < 1 || horizon > kMaxHorizonHours) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("horizon {} hours; want 1 to {}", horizon, kMaxHorizonHours));
  }
  return {};
}

}  // namespace allot::forecast
