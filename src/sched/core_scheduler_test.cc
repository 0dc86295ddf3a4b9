#include "sched/core_scheduler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/random.h"
#include "core/cluster/test_nodes.h"
#include "core/core.h"
#include "sched/policy_core_test.h"
#include "sched/test_util.h"

namespace allot::sched {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;

// The controller's core, placing through a framework policy.
class CoreWithPolicyTest : public PolicyCoreTest<std::string> {
 protected:
  void SetUp() override {
    start(GetParam());
    join(1, "n1", "eu", "A100-80GB");
    join(2, "n2", "eu", "H100-80GB");
    for (const Command& c : free_prices("eu", kT0)) apply(c);
  }

  const Instance& launch(InstanceSpec spec) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    spec.command = {"true"};
    apply(CreateInstance{id, "ten_0000000000000001", "prj_0000000000000001", "usr_1", spec});
    return *core_->state().instance(id);
  }

  int next_ = 0;
};

TEST_P(CoreWithPolicyTest, PlacesWholeGpusAndSharesWithinWhatNodesHave) {
  const Instance& h100 = launch({.gpus = 2, .gpu_models = {"H100"}});
  EXPECT_EQ(h100.node_id, "nod_0000000000000002");
  EXPECT_EQ(h100.gpu_indices.size(), 2u);
  const Instance& share = launch({.gpu_milli = 300});
  EXPECT_EQ(share.state, InstanceState::kScheduled);
  EXPECT_EQ(share.gpu_indices.size(), 1u);
  const Instance& too_big = launch({.gpus = 5});
  EXPECT_EQ(too_big.state, InstanceState::kQueued);
  EXPECT_FALSE(too_big.reason.empty());
  // What the core records matches what the GPUs hold.
  int used = 0;
  for (const auto& [id, node] : core_->state().nodes) {
    for (const Gpu& gpu : node.gpus) used += gpu.used_milli;
  }
  EXPECT_EQ(used, 2300);
}

// The scheduler keeps its Placer between calls; at every step of a random run (launches of mixed
// shapes, stops, nodes cordoned and back) it must answer what a placement from nothing answers,
// with and without a filter on the nodes.
TEST_P(CoreWithPolicyTest, AnswersWhatAPlacementFromNothingAnswers) {
  for (int n = 3; n <= 12; ++n) {
    join(n, fmt::format("n{}", n), n % 3 == 0 ? "us" : "eu",
         n % 2 == 0 ? "H100-80GB" : "A100-80GB");
  }
  for (const Command& c : free_prices("us", kT0)) apply(c);
  std::mt19937_64 rng(7);
  auto policy = make_policy(GetParam());
  ASSERT_TRUE(policy);
  const std::vector<InstanceSpec> shapes = {
      {.gpus = 1},        {.gpus = 2, .gpu_models = {"H100"}},        {.gpus = 4},
      {.gpu_milli = 250}, {.gpu_milli = 500, .gpu_models = {"A100"}}, {.gpus = 1, .region = "us"},
      {.gpus = 3}};
  std::vector<std::string> launched;
  int compared = 0;
  for (int step = 0; step < 300; ++step) {
    const int roll = static_cast<int>(rng() % 10);
    if (roll < 6) {
      const Instance probe{.id = fmt::format("ins_{:016x}", 1'000'000 + step),
                           .tenant_id = kTenant,
                           .project_id = kProject,
                           .spec = shapes[rng() % shapes.size()],
                           .created_at_ms = kPolicyT0};
      // Some of the time only odd-numbered nodes are allowed.
      NodeFilter only;
      if (roll < 2)
        only = [](const Node& node) { return std::stoul(node.id.substr(4), nullptr, 16) % 2 == 1; };
      const Draft draft(core_->state());
      std::string why_kept, why_afresh;
      const auto kept = scheduler_->place(draft, probe, only, why_kept);
      const auto afresh = place_afresh(**policy, draft, probe, only, why_afresh);
      ASSERT_EQ(kept.has_value(), afresh.has_value())
          << step << ": " << why_kept << " / " << why_afresh;
      if (kept) {
        EXPECT_EQ(kept->node_id, afresh->node_id) << step;
        EXPECT_EQ(kept->gpu_indices, afresh->gpu_indices) << step;
      } else {
        EXPECT_EQ(why_kept, why_afresh) << step;
      }
      ++compared;
      launched.push_back(launch(probe.spec).id);
    } else if (roll < 9 && !launched.empty()) {
      const size_t at = rng() % launched.size();
      apply(StopInstance{launched[at]});
      launched.erase(launched.begin() + static_cast<long>(at));
    } else {
      const std::string node = fmt::format("nod_{:016x}", 1 + rng() % 12);
      const bool cordon = rng() % 2 == 0;
      apply(SetNodeAdmin{node, cordon ? NodeAdmin::kCordoned : NodeAdmin::kNone});
    }
  }
  EXPECT_GT(compared, 100);
}

INSTANTIATE_TEST_SUITE_P(Policies, CoreWithPolicyTest,
                         ::testing::Values("first-fit", "best-fit", "spread", "gpu-packing",
                                           "dot-product", "fgd", "allot"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

// The carbon plugin through PolicyScheduler over a real State: two equal nodes, nod_…1 in region
// "north" and nod_…2 in "south"; the base policy ties them and takes the first in id order.
struct CoreCarbonCase {
  std::string name;
  double carbon_weight = 0;  // 0: off.
  std::map<std::string, Site> sites;
  TimeMs heard_at_ms = kT0;  // The nodes' last heartbeat: the latest time the draft knows.
  std::string region;        // The request's; empty: any.
  std::string node;
};

constexpr TimeMs kHour = 3'600'000;

Site site(std::string region, std::vector<RatePoint> carbon, int64_t pue_milli = 1000) {
  return Site{
      .region = std::move(region), .pue_milli = pue_milli, .carbon_g_per_kwh = std::move(carbon)};
}

std::map<std::string, Site> sites(std::vector<Site> list) {
  std::map<std::string, Site> out;
  for (Site& s : list) out.emplace(s.region, std::move(s));
  return out;
}

class CoreCarbon : public ::testing::TestWithParam<CoreCarbonCase> {};

TEST_P(CoreCarbon, PlacesOnTheExpectedNode) {
  const CoreCarbonCase& c = GetParam();
  auto policy = testing::make_policy_with_carbon(kDefaultPolicy, c.carbon_weight);
  ASSERT_TRUE(policy.has_value()) << policy.error().message;
  const PolicyScheduler scheduler(std::move(*policy));
  Core core(CoreOptions{}, &scheduler);
  auto apply = [&](const Command& command, TimeMs at_ms) {
    auto rows = core.apply(command, at_ms);
    ASSERT_TRUE(rows) << rows.error().message;
  };
  apply(CreateJoinToken{"jtk_0000000000000001", "t", std::string(64, 'a'), 0}, kT0);
  for (int n = 1; n <= 2; ++n) {
    const JoinNode join =
        gpu_join(fmt::format("nod_{:016x}", n), fmt::format("n{}", n), n == 1 ? "north" : "south",
                 "A100-80GB", std::string(64, 'a'), 4);
    apply(join, kT0);
    apply(NodeHeartbeat{.node_id = join.node_id}, c.heard_at_ms);
  }
  // No command sets the books yet, so the sites go straight into a copy of the core's state.
  State state = core.state();
  state.books.sites = c.sites;
  const Draft draft(state);
  const Instance instance{
      .id = "ins_0000000000000001", .spec = {.gpus = 1, .region = c.region}, .created_at_ms = kT0};
  std::string why;
  const auto placement = scheduler.place(draft, instance, {}, why);
  ASSERT_TRUE(placement.has_value()) << why;
  EXPECT_EQ(placement->node_id, c.node);
}

const auto kNorthDirtySouthClean = sites({site("north", {{kT0, 700}}), site("south", {{kT0, 50}})});

INSTANTIATE_TEST_SUITE_P(
    Carbon, CoreCarbon,
    ::testing::Values(
        CoreCarbonCase{"OffTheDefaultPolicyTakesTheFirstNodeThoughItsGridIsDirtier", 0,
                       kNorthDirtySouthClean, kT0, "", "nod_0000000000000001"},
        CoreCarbonCase{"OnTheCleanerRegionWins", 1, kNorthDirtySouthClean, kT0, "",
                       "nod_0000000000000002"},
        CoreCarbonCase{"OnARequestForTheDirtyRegionStaysThere", 1, kNorthDirtySouthClean, kT0,
                       "north", "nod_0000000000000001"},
        CoreCarbonCase{
            "OnTheStepInForceAtTheLatestHeartbeatDecides", 1,
            sites({site("north", {{kT0, 700}}), site("south", {{kT0, 50}, {kT0 + kHour, 900}})}),
            kT0 + kHour, "", "nod_0000000000000001"},
        CoreCarbonCase{
            "OnTheStepBeforeTheNextOneStillHolds", 1,
            sites({site("north", {{kT0, 700}}), site("south", {{kT0, 50}, {kT0 + kHour, 900}})}),
            kT0 + kHour - 1, "", "nod_0000000000000002"},
        CoreCarbonCase{
            "OnPueCountsWithTheGrid", 1,
            sites({site("north", {{kT0, 400}}, 1600), site("south", {{kT0, 400}}, 1100)}), kT0, "",
            "nod_0000000000000002"},
        CoreCarbonCase{"OnASiteWithNoStepYetIsUnknownNotClean", 1,
                       sites({site("north", {{kT0, 700}}), site("south", {{kT0 + kHour, 10}})}),
                       kT0, "", "nod_0000000000000001"},
        CoreCarbonCase{"OnNoSitesChangeNothing", 1, {}, kT0, "", "nod_0000000000000001"}),
    [](const auto& info) { return info.param.name; });

struct IntensityCase {
  std::string name;
  Site site;
  TimeMs at_ms;
  std::optional<double> grams;  // nullopt: the region is left out.
};

class CarbonByRegion : public ::testing::TestWithParam<IntensityCase> {};

TEST_P(CarbonByRegion, IsTheStepInForceTimesPue) {
  const IntensityCase& c = GetParam();
  Books books;
  books.sites.emplace(c.site.region, c.site);
  const auto grids = carbon_by_region(books, c.at_ms);
  if (!c.grams) {
    EXPECT_FALSE(grids.contains(c.site.region));
  } else {
    ASSERT_TRUE(grids.contains(c.site.region));
    EXPECT_DOUBLE_EQ(grids.at(c.site.region), *c.grams);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Carbon, CarbonByRegion,
    ::testing::Values(
        IntensityCase{"TheFirstStepHoldsFromItsStart", site("r", {{100, 300}, {200, 500}}), 100,
                      300.0},
        IntensityCase{"ALaterStepReplacesIt", site("r", {{100, 300}, {200, 500}}), 200, 500.0},
        IntensityCase{"TheLastStepHoldsForever", site("r", {{100, 300}, {200, 500}}), kT0, 500.0},
        IntensityCase{"BeforeTheFirstStepTheRegionIsLeftOut", site("r", {{100, 300}}), 99,
                      std::nullopt},
        IntensityCase{"ASiteWithNoSeriesIsLeftOut", site("r", {}), kT0, std::nullopt},
        IntensityCase{"PueMultipliesTheGrid", site("r", {{0, 400}}, 1500), 1, 600.0},
        IntensityCase{"APueBelowOneCountsAsOne", site("r", {{0, 400}}, 0), 1, 400.0}),
    [](const auto& info) { return info.param.name; });

TEST(PlacementTime, IsTheLatestHeartbeatOrTheInstanceCreationIfLater) {
  State state;
  state.nodes.emplace("a", Node{.id = "a", .last_heartbeat_ms = 500});
  state.nodes.emplace("b", Node{.id = "b", .last_heartbeat_ms = 900});
  const Draft draft(state);
  EXPECT_EQ(placement_time(draft, Instance{.created_at_ms = 100}), 900);
  EXPECT_EQ(placement_time(draft, Instance{.created_at_ms = 1200}), 1200);
}

}  // namespace
}  // namespace allot::sched
