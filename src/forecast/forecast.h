// Hourly demand forecasts, used to grow pools before the daily peak instead of after it.
//
// Demand on a GPU cluster has a daily cycle and a slow drift, so the model is Holt-Winters
// (triple exponential smoothing) with a season of 24 hours and a damped trend: the damping keeps
// a trend seen over the last days from being extrapolated without end over a two-week horizon.
// Its four smoothing parameters are chosen by a small grid search (see `fit`). Series are hourly,
// oldest first, in any unit (GPUs here); doubles are enough because a forecast is an estimate,
// not money.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace allot::forecast {

// The season: demand repeats by the hour of the day.
inline constexpr int kSeasonHours = 24;
// Two seasons: the first sets the season's shape, the second against the first sets the trend.
inline constexpr int kMinHistoryHours = 2 * kSeasonHours;
// Two weeks: further out, a daily model says little that the same day a week earlier would not.
inline constexpr int kMaxHorizonHours = 14 * kSeasonHours;

enum class Seasonality {
  kAdditive,        // The daily swing is a number of GPUs, whatever the level.
  kMultiplicative,  // The daily swing is a share of the level; only for strictly positive series.
};

// "additive" or "multiplicative".
std::string_view seasonality_name(Seasonality seasonality);

// Holt-Winters smoothing parameters, each of alpha, beta and gamma in (0, 1] or beta 0 (the
// trend stays as first estimated), and phi in (0, 1] (1: no damping).
struct Params {
  double alpha = 0.5;  // Weight of the newest hour in the level.
  double beta = 0.0;   // Weight of the newest level change in the trend.
  double gamma = 0.1;  // Weight of the newest hour in its hour-of-day season.
  double phi = 1.0;    // The trend's damping per hour ahead.
  Seasonality seasonality = Seasonality::kAdditive;

  bool operator==(const Params&) const = default;
};

// Forecasts the next `horizon` hours of an hourly series given oldest first. Needs at least
// 48 hours of history and 1 <= horizon <= 24*14; otherwise an Error with code "invalid_argument".
// Never returns a negative value.
// A negative or non-finite hour in the history is refused with "invalid_argument" as well, since
// demand cannot be negative and one NaN would make every forecast NaN. It is `fit` followed by
// `predict_with`.
[[nodiscard]] Result<std::vector<double>> predict(std::span<const double> history, int horizon);

// The parameters that minimise the mean absolute one-step-ahead error over the last part of the
// history (half the hours after the first day, at most the last 7 days; at most the last 8 weeks
// are smoothed). Every combination of a fixed grid is tried, the multiplicative season only when
// every hour is above 0; ties go to the first in the grid, so the choice is deterministic.
// Fails with "invalid_argument" as `predict` does.
[[nodiscard]] Result<Params> fit(std::span<const double> history);

// Smooths the whole history with `params` and forecasts the next `horizon` hours, clamped at 0.
// Fails with "invalid_argument" as `predict` does, on parameters out of range, and on a
// multiplicative season over a history whose level falls to 0 (the season would divide by it).
[[nodiscard]] Result<std::vector<double>> predict_with(std::span<const double> history,
                                                       const Params& params, int horizon);

// The naive seasonal forecast: each hour ahead is the same hour of the last day in the history
// (the same hour yesterday, repeated for every further day). Needs at least 24 hours of history
// and 1 <= horizon <= 24*14, and refuses negative or non-finite hours, with "invalid_argument".
[[nodiscard]] Result<std::vector<double>> naive_daily(std::span<const double> history, int horizon);

}  // namespace allot::forecast
