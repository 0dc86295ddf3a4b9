// Checks shared by the forecasts and the error measures, so that each refuses bad input with
// the same words.
#pragma once

#include <span>

#include "common/error.h"

namespace allot::forecast {

// At least `min_hours` hours, each finite and not negative.
[[nodiscard]] Status check_history(std::span<const double> history, int min_hours);

// 1 <= horizon <= kMaxHorizonHours.
[[nodiscard]] Status check_horizon(int horizon);

}  // namespace allot::forecast
