// Demand history from the instances in the state, and the pool sizes a forecast peak calls for.
#include "core/pools/demand.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000 - (1'800'000'000'000 % kHourMs);

Instance instance(const std::string& id, int gpus, TimeMs created, TimeMs ended,
                  std::vector<std::string> models = {}) {
  Instance i{.id = id, .created_at_ms = created, .ended_at_ms = ended};
  i.spec.gpus = gpus;
  i.spec.gpu_models = std::move(models);
  i.state = ended == 0 ? InstanceState::kRunning : InstanceState::kSucceeded;
  return i;
}

Pool pool(const std::string& id, const std::string& name, int max_nodes, int gpus_per_node) {
  return Pool{.id = id,
              .name = name,
              .gpu_model = "H100-80GB",
              .max_nodes = max_nodes,
              .gpus_per_node = gpus_per_node};
}

TEST(HourlyDemand, EachHourHoldsTheGpuHoursAskedForThenSplitAtHourBoundaries) {
  State state;
  // 4 GPUs from 0:30 to 2:00, 2 GPUs of an A100 (not counted), 1 GPU still running from 1:00.
  state.instances["a"] = instance("a", 4, kT0 + kHourMs / 2, kT0 + 2 * kHourMs);
  state.instances["b"] = instance("b", 2, kT0, kT0 + 3 * kHourMs, {"A100"});
  state.instances["c"] = instance("c", 1, kT0 + kHourMs, 0, {"H100"});
  const auto hours = hourly_demand(state, "H100-80GB", kT0, 3, kT0 + 2 * kHourMs + kHourMs / 4);
  ASSERT_EQ(hours.size(), 3U);
  EXPECT_DOUBLE_EQ(hours[0], 2.0);   // Half an hour of 4 GPUs.
  EXPECT_DOUBLE_EQ(hours[1], 5.0);   // 4 + 1.
  EXPECT_DOUBLE_EQ(hours[2], 0.25);  // c's first quarter hour, up to now.
}

TEST(HourlyDemand, AGangCountsEveryMemberAndAFractionCountsItsShare) {
  State state;
  Instance gang = instance("g", 8, kT0, kT0 + kHourMs);
  gang.spec.nodes = 2;
  state.instances["g"] = gang;
  Instance quarter = instance("q", 0, kT0, kT0 + kHourMs);
  quarter.spec.gpu_milli = 250;
  state.instances["q"] = quarter;
  EXPECT_DOUBLE_EQ(hourly_demand(state, "H100-80GB", kT0, 1, kT0 + kHourMs)[0], 16.25);
}

TEST(ForecastPoolTargets, StandingNodesTakeDemandFirstThenPoolsInNameOrderUpToTheirMaximum) {
  State state;
  state.pools["p2"] = pool("p2", "b-overflow", 10, 8);
  state.pools["p1"] = pool("p1", "a-first", 2, 8);
  const auto targets = forecast_pool_targets(state, {{"H100-80GB", 41.0}}, {{"H100-80GB", 8}});
  // 33 GPUs past the standing 8: the first pool's 2 nodes take 16, the next 3 nodes the rest.
  EXPECT_EQ(targets, (std::map<std::string, int>{{"p1", 2}, {"p2", 3}}));
  EXPECT_TRUE(forecast_pool_targets(state, {}, {}).empty());
  const auto low = forecast_pool_targets(state, {{"H100-80GB", 4.0}}, {{"H100-80GB", 8}});
  EXPECT_EQ(low, (std::map<std::string, int>{{"p1", 0}, {"p2", 0}}));
}

TEST(StandingGpus, CountsLiveNodesOutsidePoolsByModel) {
  State state;
  Node fixed{.id = "n1", .gpus = {Gpu{.model = "H100-80GB"}, Gpu{.model = "H100-80GB"}}};
  Node pooled{.id = "n2", .labels = {{"pool", "burst"}}, .gpus = {Gpu{.model = "H100-80GB"}}};
  Node lost{.id = "n3", .lost = true, .gpus = {Gpu{.model = "H100-80GB"}}};
  state.nodes = {{"n1", fixed}, {"n2", pooled}, {"n3", lost}};
  EXPECT_EQ(standing_gpus(state), (std::map<std::string, int>{{"H100-80GB", 2}}));
}

}  // namespace
}  // namespace allot
