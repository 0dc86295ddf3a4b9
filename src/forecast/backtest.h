// How good a forecast is: error measures and a backtest that scores Holt-Winters beside the
// naive forecast on a held-back tail of a series, the way pre-scaling uses them.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "common/error.h"
#include "forecast/forecast.h"

namespace allot::forecast {

// Mean absolute percentage error. An hour whose actual is 0 has no percentage error, so it is
// skipped and counted; `percent` is empty when every hour was skipped.
struct Mape {
  std::optional<double> percent;
  int hours = 0;          // The hours scored.
  int skipped_hours = 0;  // The hours skipped because their actual was 0.
};

// Weighted absolute percentage error: the sum of absolute errors over the sum of actuals, in
// percent. Unlike MAPE it is not dominated by hours of little demand. Empty when every actual is 0.
struct Wape {
  std::optional<double> percent;
  int hours = 0;
};

// Both fail with "invalid_argument" when the spans differ in length, are empty, or hold a
// negative or non-finite actual or a non-finite forecast.
[[nodiscard]] Result<Mape> mape(std::span<const double> actual, std::span<const double> forecast);
[[nodiscard]] Result<Wape> wape(std::span<const double> actual, std::span<const double> forecast);

struct MethodScore {
  std::vector<double> forecast;  // One value per held-back hour.
  Mape mape;
  Wape wape;
};

struct Backtest {
  int fitted_hours = 0;   // The head the parameters were chosen on.
  int holdout_hours = 0;  // The tail scored.
  Params params;          // Chosen on the head.
  // Days on which the chosen multiplicative season could not be used (the level fell to 0) and
  // the parameters were chosen again on the history then known.
  int refits = 0;
  MethodScore holt_winters;
  MethodScore naive;
};

// Chooses Holt-Winters parameters on all but the last `holdout_hours` of `series`, then walks the
// tail a day at a time: forecast the next 24 hours (fewer at the end) from the history so far,
// with those parameters and with `naive_daily`, then reveal them. This is how pre-scaling uses a
// forecast: once a day, for the day ahead. Fails with "invalid_argument" when the head is shorter
// than kMinHistoryHours, `holdout_hours` is below 1, or a value is negative or non-finite.
[[nodiscard]] Result<Backtest> backtest(std::span<const double> series, int holdout_hours);

}  // namespace allot::forecast
