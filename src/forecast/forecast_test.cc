#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

#include "forecast/backtest.h"
#include "forecast/forecast.h"

namespace allot::forecast {
namespace {

// A daily cycle of +-`swing` around a line that starts at `base` and climbs `slope` an hour.
double cycle(int hour, double base, double slope, double swing) {
  return base + slope * hour + swing * std::sin(2 * std::numbers::pi * hour / kSeasonHours);
}

std::vector<double> series(int hours, double base, double slope, double swing) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(hours));
  for (int hour = 0; hour < hours; ++hour) values.push_back(cycle(hour, base, slope, swing));
  return values;
}

TEST(Predict, ForecastsAnExactDailyCycleWithTinyError) {
  const std::vector<double> history = series(10 * kSeasonHours, 30, 0, 12);
  Result<std::vector<double>> forecast = predict(history, 3 * kSeasonHours);
  ASSERT_TRUE(forecast) << forecast.error().message;
  ASSERT_EQ(forecast->size(), 72U);
  for (int ahead = 0; ahead < 72; ++ahead) {
    EXPECT_NEAR((*forecast)[ahead], cycle(240 + ahead, 30, 0, 12), 1e-6) << "hour " << ahead;
  }
}

TEST(Predict, FollowsAnExactCycleOnARisingLine) {
  const std::vector<double> history = series(10 * kSeasonHours, 30, 0.25, 12);
  Result<std::vector<double>> forecast = predict(history, kMaxHorizonHours);
  ASSERT_TRUE(forecast) << forecast.error().message;
  for (int ahead = 0; ahead < kMaxHorizonHours; ++ahead) {
    EXPECT_NEAR((*forecast)[ahead], cycle(240 + ahead, 30, 0.25, 12), 1e-6) << "hour " << ahead;
  }
}

TEST(Predict, RefusesTooShortHistoryAndBadHorizonsWithInvalidArgument) {
  const std::vector<double> day_and_a_bit = series(kMinHistoryHours - 1, 30, 0, 5);
  Result<std::vector<double>> short_history = predict(day_and_a_bit, 24);
  ASSERT_FALSE(short_history);
  EXPECT_EQ(short_history.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_name(short_history.error().code), "invalid_argument");
  const std::vector<double> two_days = series(kMinHistoryHours, 30, 0, 5);
  EXPECT_TRUE(predict(two_days, 24));
  for (int horizon : {0, -1, kMaxHorizonHours + 1}) {
    Result<std::vector<double>> bad = predict(two_days, horizon);
    ASSERT_FALSE(bad) << "horizon " << horizon;
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(predict(two_days, kMaxHorizonHours));
}

TEST(Predict, RefusesNegativeAndNonFiniteHours) {
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    std::vector<double> history = series(72, 30, 0, 5);
    history[40] = bad;
    Result<std::vector<double>> forecast = predict(history, 24);
    ASSERT_FALSE(forecast) << bad;
    EXPECT_EQ(forecast.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(Predict, NeverForecastsBelowZeroWhenDemandFallsAway) {
  // Demand falling 1.5 GPUs an hour from 150 reaches 0 within three days of the history's end.
  const std::vector<double> history = series(4 * kSeasonHours, 150, -1.5, 4);
  Result<std::vector<double>> forecast = predict(history, kMaxHorizonHours);
  ASSERT_TRUE(forecast) << forecast.error().message;
  EXPECT_GE(*std::ranges::min_element(*forecast), 0.0);
  // The line itself goes negative, so the clamp is what kept the forecast at 0.
  EXPECT_EQ(forecast->back(), 0.0);
}

TEST(Fit, ChoosesAMultiplicativeSeasonWhenTheSwingGrowsWithTheLevel) {
  std::vector<double> history;
  history.reserve(size_t{21} * kSeasonHours);
  for (int hour = 0; hour < 21 * kSeasonHours; ++hour) {
    history.push_back(cycle(hour, 20, 0.2, 0) * cycle(hour, 1, 0, 0.6));
  }
  Result<Params> params = fit(history);
  ASSERT_TRUE(params) << params.error().message;
  EXPECT_EQ(params->seasonality, Seasonality::kMultiplicative);
  Result<std::vector<double>> forecast = predict_with(history, *params, kSeasonHours);
  ASSERT_TRUE(forecast);
  for (int ahead = 0; ahead < kSeasonHours; ++ahead) {
    const int hour = 21 * kSeasonHours + ahead;
    const double actual = cycle(hour, 20, 0.2, 0) * cycle(hour, 1, 0, 0.6);
    EXPECT_NEAR((*forecast)[ahead], actual, 0.01 * actual) << "hour " << ahead;
  }
}

TEST(PredictWith, RefusesAMultiplicativeSeasonOverZeroDemandAndParametersOutOfRange) {
  std::vector<double> history = series(72, 30, 0, 5);
  history[3] = 0;
  const Params multiplicative{.seasonality = Seasonality::kMultiplicative};
  EXPECT_FALSE(predict_with(history, multiplicative, 24));
  EXPECT_TRUE(predict_with(history, Params{}, 24));
  for (const Params& bad : {Params{.alpha = 0}, Params{.beta = -0.1}, Params{.gamma = 1.5},
                            Params{.phi = std::nan("")}}) {
    Result<std::vector<double>> forecast = predict_with(history, bad, 24);
    ASSERT_FALSE(forecast);
    EXPECT_EQ(forecast.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(NaiveDaily, RepeatsTheLastDayForEveryDayAhead) {
  const std::vector<double> history = series(30, 10, 1, 0);  // 10, 11, ... 39.
  Result<std::vector<double>> forecast = naive_daily(history, 30);
  ASSERT_TRUE(forecast) << forecast.error().message;
  EXPECT_EQ((*forecast)[0], 16.0);   // Hour 30 is 24 hours after hour 6.
  EXPECT_EQ((*forecast)[23], 39.0);  // The last hour known.
  EXPECT_EQ((*forecast)[24], 16.0);  // The day after: the same day again.
  EXPECT_FALSE(naive_daily(series(23, 10, 0, 0), 1));
  EXPECT_FALSE(naive_daily(history, 0));
}

TEST(Mape, SkipsHoursWhoseActualIsZeroAndCountsThem) {
  const std::vector<double> actual = {0, 10, 20, 0};
  const std::vector<double> forecast = {5, 11, 18, 0};
  Result<Mape> by_hour = mape(actual, forecast);
  ASSERT_TRUE(by_hour) << by_hour.error().message;
  EXPECT_EQ(by_hour->hours, 2);
  EXPECT_EQ(by_hour->skipped_hours, 2);
  ASSERT_TRUE(by_hour->percent);
  EXPECT_NEAR(*by_hour->percent, 10.0, 1e-12);  // 10 % and 10 %.
  Result<Wape> weighted = wape(actual, forecast);
  ASSERT_TRUE(weighted);
  EXPECT_EQ(weighted->hours, 4);
  EXPECT_NEAR(*weighted->percent, 100.0 * 8 / 30, 1e-12);  // |5| + |1| + |2| over 30.
}

TEST(Mape, HasNoValueWhenEveryActualIsZeroAndRefusesMismatchedSpans) {
  const std::vector<double> zeros = {0, 0};
  const std::vector<double> forecast = {1, 2};
  Result<Mape> by_hour = mape(zeros, forecast);
  ASSERT_TRUE(by_hour);
  EXPECT_FALSE(by_hour->percent);
  EXPECT_EQ(by_hour->skipped_hours, 2);
  EXPECT_FALSE(wape(zeros, forecast)->percent);
  const std::vector<double> one = {1};
  EXPECT_FALSE(mape(one, forecast));
  EXPECT_FALSE(wape(std::span<const double>{}, std::span<const double>{}));
}

// Seeded so that a failure can be rerun: 4 weeks of a noisy cycle on a rising line.
std::vector<double> noisy_series(uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> noise(0, 2);
  std::vector<double> values = series(28 * kSeasonHours, 40, 0.1, 15);
  for (double& value : values) value = std::max(0.0, value + noise(random));
  return values;
}

TEST(Backtest, HoltWintersBeatsTheNaiveForecastOnANoisyCycleWithATrend) {
  constexpr uint64_t kSeed = 20261202;
  const std::vector<double> values = noisy_series(kSeed);
  Result<Backtest> result = backtest(values, 7 * kSeasonHours);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->fitted_hours, 21 * kSeasonHours);
  EXPECT_EQ(result->holdout_hours, 7 * kSeasonHours);
  EXPECT_EQ(result->holt_winters.mape.hours, 7 * kSeasonHours) << "seed " << kSeed;
  EXPECT_EQ(result->naive.wape.hours, 7 * kSeasonHours);
  EXPECT_LT(*result->holt_winters.mape.percent, *result->naive.mape.percent) << "seed " << kSeed;
  EXPECT_LT(*result->holt_winters.wape.percent, *result->naive.wape.percent) << "seed " << kSeed;
}

TEST(Backtest, ForecastsEachHeldBackDayFromTheHoursBeforeIt) {
  const std::vector<double> values = series(5 * kSeasonHours, 10, 0.5, 0);  // No two hours alike.
  Result<Backtest> result = backtest(values, 30);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->fitted_hours, 90);
  ASSERT_EQ(result->naive.forecast.size(), 30U);
  ASSERT_EQ(result->holt_winters.forecast.size(), 30U);
  // The first day ahead repeats hours 66..89, the next six hours (revealed by then) 90..95.
  EXPECT_EQ(result->naive.forecast[0], values[66]);
  EXPECT_EQ(result->naive.forecast[23], values[89]);
  EXPECT_EQ(result->naive.forecast[24], values[90]);
  EXPECT_EQ(result->naive.forecast[29], values[95]);
}

TEST(Backtest, RefusesAHeadShorterThanTwoDaysAndAnEmptyHoldout) {
  const std::vector<double> values = series(72, 10, 0, 3);
  EXPECT_TRUE(backtest(values, 24));
  EXPECT_EQ(backtest(values, 25).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(backtest(values, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(backtest(values, 73).error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace allot::forecast
