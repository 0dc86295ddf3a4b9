// The "prefer" score plugin and the hard limits, through the controller's core: where a request
// that states a preference or limits lands, case by case.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cluster/test_nodes.h"
#include "core/core.h"
#include "sched/core_scheduler.h"
#include "sched/policy_core_test.h"

namespace allot::sched {
namespace {

constexpr int64_t kUnit = 1'000'000;

struct PreferCase {
  std::string name;
  InstanceSpec spec;
  std::string node;  // Where it lands; empty: it waits.
  std::string reason_has = "";
};

// Two regions of one H100 node each: eu is dearer, cleaner and closer to eu-users than us.
class PreferTest : public PolicyCoreTest<PreferCase> {
 protected:
  void SetUp() override {
    start(std::string(kDefaultPolicy));
    join(1, "eu", "eu", "H100-80GB");
    join(2, "us", "us", "H100-80GB");
    apply(SetPrice{{.key = {.model = "H100-80GB", .region = "eu"}, .gpu_hour_micros = 3 * kUnit}});
    apply(SetPrice{{.key = {.model = "H100-80GB", .region = "us"}, .gpu_hour_micros = 2 * kUnit}});
    // Priced, but no node there yet (a pool could grow one): work limited to it waits.
    apply(SetPrice{{.key = {.model = "H100-80GB", .region = "mars"}, .gpu_hour_micros = kUnit}});
    apply(AddSiteRate{.region = "eu", .rate = SiteRate::kCarbonIntensity, .point = {0, 100}});
    apply(AddSiteRate{.region = "us", .rate = SiteRate::kCarbonIntensity, .point = {0, 500}});
    apply(SetLatency{.from = "eu-users", .region = "eu", .rtt_ms = 10});
    apply(SetLatency{.from = "eu-users", .region = "us", .rtt_ms = 80});
  }
};

const std::string kEu = "nod_0000000000000001";
const std::string kUs = "nod_0000000000000002";

TEST_P(PreferTest, LandsWhereItsPreferenceAndLimitsSay) {
  const PreferCase& c = GetParam();
  InstanceSpec spec = c.spec;
  spec.command = {"true"};
  apply(CreateInstance{"ins_0000000000000001", "ten_0000000000000001", "prj_0000000000000001",
                       "usr_1", spec});
  const Instance& instance = *core_->state().instance("ins_0000000000000001");
  EXPECT_EQ(instance.node_id, c.node) << instance.reason;
  if (c.node.empty()) {
    EXPECT_EQ(instance.state, InstanceState::kQueued);
  }
  if (!c.reason_has.empty()) {
    EXPECT_NE(instance.reason.find(c.reason_has), std::string::npos) << instance.reason;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PreferTest,
    ::testing::Values(
        PreferCase{
            "PreferringPriceGoesToTheCheaperRegion", {.gpus = 1, .prefer = Prefer::kPrice}, kUs},
        PreferCase{
            "PreferringCarbonGoesToTheCleanerRegion", {.gpus = 1, .prefer = Prefer::kCarbon}, kEu},
        PreferCase{"PreferringLatencyGoesToTheRegionClosestToTheClients",
                   {.gpus = 1, .prefer = Prefer::kLatency, .from = "eu-users"},
                   kEu},
        PreferCase{"AllowedRegionsOverrideThePreference",
                   {.gpus = 1, .regions = {"us"}, .prefer = Prefer::kCarbon},
                   kUs},
        PreferCase{"AMaximumPriceOverridesThePreference",
                   {.gpus = 1, .max_price_micros = 2'500'000, .prefer = Prefer::kCarbon},
                   kUs},
        PreferCase{"NoRegionAllowedHasNodesSoItWaitsNamingTheLimit",
                   {.gpus = 1, .regions = {"mars"}},
                   "",
                   "not in the allowed regions (mars)"},
        PreferCase{"EveryNodeOverTheMaximumSoItWaitsNamingThePrice",
                   {.gpus = 1, .max_price_micros = kUnit},
                   "",
                   "over max price 1.000000"}),
    [](const ::testing::TestParamInfo<PreferCase>& info) { return info.param.name; });

}  // namespace
}  // namespace allot::sched
