#include "forecast/backtest.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "forecast/validate.h"

namespace allot::forecast {
namespace {

Status check_pair(std::span<const double> actual, std::span<const double> forecast) {
  if (actual.empty() || actual.size() != forecast.size()) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} actual hours against {} forecast hours; want the same number, "
                            "at least 1",
                            actual.size(), forecast.size()));
  }
  if (Status valid = check_history(actual, 1); !valid) return valid;
  if (!std::ranges::all_of(forecast, [](double value) { return std::isfinite(value); })) {
    return fail(ErrorCode::kInvalidArgument, "a forecast hour is not a finite number");
  }
  return {};
}

// Walks the tail from `head` a day at a time, appending each day's forecast by `method`.
template <typename Method>
Status roll(std::span<const double> series, size_t head, std::vector<double>& out,
            Method&& method) {
  out.reserve(series.size() - head);
  for (size_t start = head; start < series.size(); start += kSeasonHours) {
    const int hours = static_cast<int>(std::min<size_t>(kSeasonHours, series.size() - start));
    Result<std::vector<double>> day = method(series.first(start), hours);
    if (!day) return std::unexpected(day.error());
    out.insert(out.end(), day->begin(), day->end());
  }
  return {};
}

Result<MethodScore> score(std::span<const double> tail, std::vector<double> forecast) {
  MethodScore result;
  Result<Mape> by_hour = mape(tail, forecast);
  if (!by_hour) return std::unexpected(by_hour.error());
  Result<Wape> weighted = wape(tail, forecast);
  if (!weighted) return std::unexpected(weighted.error());
  result.forecast = std::move(forecast);
  result.mape = *by_hour;
  result.wape = *weighted;
  return result;
}

}  // namespace

Result<Mape> mape(std::span<const double> actual, std::span<const double> forecast) {
  if (Status valid = check_pair(actual, forecast); !valid) return std::unexpected(valid.error());
  Mape result;
  double sum = 0;
  for (size_t hour = 0; hour < actual.size(); ++hour) {
    if (actual[hour] == 0) {
      ++result.skipped_hours;
      continue;
    }
    sum += std::abs(forecast[hour] - actual[hour]) / actual[hour];
    ++result.hours;
  }
  if (result.hours > 0) result.percent = 100 * sum / result.hours;
  return result;
}

Result<Wape> wape(std::span<const double> actual, std::span<const double> forecast) {
  if (Status valid = check_pair(actual, forecast); !valid) return std::unexpected(valid.error());
  double errors = 0;
  double actuals = 0;
  for (size_t hour = 0; hour < actual.size(); ++hour) {
    errors += std::abs(forecast[hour] - actual[hour]);
    actuals += actual[hour];
  }
  Wape result{.hours = static_cast<int>(actual.size())};
  if (actuals > 0) result.percent = 100 * errors / actuals;
  return result;
}

Result<Backtest> backtest(std::span<const double> series, int holdout_hours) {
  if (holdout_hours < 1 || static_cast<size_t>(holdout_hours) > series.size()) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("hold-out of {} hours from a series of {}; want 1 to the series",
                            holdout_hours, series.size()));
  }
  const size_t head = series.size() - static_cast<size_t>(holdout_hours);
  if (Status valid = check_history(series, 0); !valid) return std::unexpected(valid.error());
  if (head < static_cast<size_t>(kMinHistoryHours)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} hours before the hold-out; at least {} are needed", head,
                            kMinHistoryHours));
  }
  Backtest result{.fitted_hours = static_cast<int>(head), .holdout_hours = holdout_hours};
  Result<Params> params = fit(series.first(head));
  if (!params) return std::unexpected(params.error());
  result.params = *params;
  std::vector<double> hw;
  Status rolled = roll(series, head, hw, [&](std::span<const double> history, int hours) {
    Result<std::vector<double>> day = predict_with(history, result.params, hours);
    if (day || result.params.seasonality == Seasonality::kAdditive) return day;
    // A multiplicative season broke on the newly revealed hours: choose again, as an operator
    // would, on what is known by now.
    ++result.refits;
    return predict(history, hours);
  });
  if (!rolled) return std::unexpected(rolled.error());
  std::vector<double> naive;
  rolled = roll(series, head, naive, naive_daily);
  if (!rolled) return std::unexpected(rolled.error());
  const std::span<const double> tail = series.subspan(head);
  Result<MethodScore> hw_score = score(tail, std::move(hw));
  if (!hw_score) return std::unexpected(hw_score.error());
  Result<MethodScore> naive_score = score(tail, std::move(naive));
  if (!naive_score) return std::unexpected(naive_score.error());
  result.holt_winters = std::move(*hw_score);
  result.naive = std::move(*naive_score);
  return result;
}

}  // namespace allot::forecast
