// allotd's pre-scaling: the demand history read from the state's instances, and the forecast
// peak that grows pools ahead of the daily peak.
#include "daemon/prescale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "core/pools/demand.h"

namespace allot {
namespace {

constexpr TimeMs kDay0 = 1'800'000'000'000 - (1'800'000'000'000 % (24 * kHourMs));

// Days of hourly jobs in a daily cycle: 4 GPUs at night, 36 at 14:00.
State daily_cycle(int days) {
  State state;
  state.pools["pol_1"] = Pool{
      .id = "pol_1", .name = "h100", .gpu_model = "H100-80GB", .max_nodes = 8, .gpus_per_node = 8};
  int n = 0;
  for (int h = 0; h < days * 24; ++h) {
    const double phase = 2 * std::numbers::pi * ((h % 24) - 14) / 24.0;
    const int gpus = static_cast<int>(std::lround(20 + (16 * std::cos(phase))));
    for (int g = 0; g < gpus; ++g) {
      const std::string id = fmt::format("ins_{:016x}", ++n);
      Instance i{.id = id,
                 .state = InstanceState::kSucceeded,
                 .created_at_ms = kDay0 + (h * kHourMs),
                 .ended_at_ms = kDay0 + ((h + 1) * kHourMs)};
      i.spec.gpus = 1;
      state.instances[id] = i;
    }
  }
  return state;
}

TEST(DemandHistory, HoldsTheCompleteHoursSinceTheFirstInstanceForEachPoolsModel) {
  const State state = daily_cycle(3);
  const DemandHistory history = demand_history(state, kDay0 + (72 * kHourMs) + 1'234, 336);
  EXPECT_EQ(history.hour_ms, kDay0 + (72 * kHourMs));
  ASSERT_EQ(history.by_model.size(), 1U);
  const std::vector<double>& hours = history.by_model.at("H100-80GB");
  ASSERT_EQ(hours.size(), 72U);  // Nothing from before the first instance.
  EXPECT_DOUBLE_EQ(hours[14], 36.0);
  EXPECT_DOUBLE_EQ(hours[2], 4.0);
  // At most history_h hours.
  EXPECT_EQ(demand_history(state, kDay0 + (72 * kHourMs), 50).by_model.at("H100-80GB").size(), 50U);
}

TEST(ForecastPeaks, SeesTheAfternoonPeakComingFromTheMorning) {
  const State state = daily_cycle(4);  // Instances of later hours are not history yet.
  // At 12:00 on the fourth day, two hours ahead: the peak at 14:00 (36 GPUs) is in view.
  std::vector<std::string> errors;
  const auto peaks = forecast_peaks(demand_history(state, kDay0 + (84 * kHourMs), 336), 2, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_TRUE(peaks.contains("H100-80GB"));
  EXPECT_GT(peaks.at("H100-80GB"), 30.0);
  EXPECT_LT(peaks.at("H100-80GB"), 42.0);
  // The pool grows to hold it: 5 nodes of 8 GPUs.
  const auto targets = forecast_pool_targets(state, peaks, {});
  EXPECT_GE(targets.at("pol_1"), 4);
  EXPECT_LE(targets.at("pol_1"), 6);
}

TEST(ForecastPeaks, LessThanTwoDaysOfHistoryForecastsNothing) {
  const State state = daily_cycle(3);
  std::vector<std::string> errors;
  EXPECT_TRUE(
      forecast_peaks(demand_history(state, kDay0 + (47 * kHourMs), 336), 2, errors).empty());
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(forecast_peaks(demand_history(State{}, kDay0, 336), 2, errors).empty());
}

}  // namespace
}  // namespace allot
