// The carbon score plugin on the framework's own nodes: which node wins with it on and off.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sched/plugins.h"
#include "sched/sched.h"
#include "sched/test_util.h"

// Inside the helpers' namespace (sched/test_util.h), so that they need no using-declarations.
namespace allot::sched::testing {
namespace {

// Grid intensity times PUE, per region, as the controller fills it in (g/kWh of IT energy).
const std::map<std::string, double> kGrids = {{"clean", 50}, {"dirty", 700}};

struct CarbonCase {
  std::string name;
  std::string policy;
  double carbon_weight = 0;  // 0: the plugin is off.
  std::map<std::string, double> grids;
  std::vector<NodeView> nodes;
  Request request;
  std::string node;         // The node that should win.
  std::vector<int> gpus{};  // Empty: not checked.
};

// An A100 node in `region` with one GPU per entry of `free_milli`.
NodeView node_in(std::string id, std::string region, std::vector<int> free_milli = {1000, 1000}) {
  return make_node(std::move(id), std::move(free_milli), "A100-80GB", 64000, std::move(region));
}

// Two otherwise-equal nodes, the dirty one first: every base policy ties them and a tie goes to
// the first node, so with the plugin off the dirty node wins.
std::vector<NodeView> dirty_then_clean() {
  return {node_in("dirty-node", "dirty"), node_in("clean-node", "clean")};
}

Request in_region(Request request, std::string region) {
  request.region = std::move(region);
  return request;
}

class CarbonChoice : public ::testing::TestWithParam<CarbonCase> {};

TEST_P(CarbonChoice, PicksTheExpectedNode) {
  const CarbonCase& c = GetParam();
  auto policy = make_policy_with_carbon(c.policy, c.carbon_weight);
  ASSERT_TRUE(policy.has_value()) << policy.error().message;
  CycleState cycle = worked_cycle();
  cycle.carbon_g_per_kwh = c.grids;
  std::string why;
  const auto choice = (*policy)->place(cycle, c.request, c.nodes, why);
  ASSERT_TRUE(choice.has_value()) << why;
  EXPECT_EQ(c.nodes[choice->node].id, c.node);
  if (!c.gpus.empty()) {
    EXPECT_EQ(choice->gpus, c.gpus);
  }
  // The Placer, which caches per node, agrees with the policy.
  Placer placer(**policy, cycle, c.nodes);
  const auto cached = placer.place(c.request, why);
  ASSERT_TRUE(cached.has_value()) << why;
  EXPECT_EQ(cached->node, choice->node);
  EXPECT_EQ(cached->gpus, choice->gpus);
}

INSTANTIATE_TEST_SUITE_P(
    Carbon, CarbonChoice,
    ::testing::Values(
        CarbonCase{"OffTheDefaultPolicyKeepsTheDirtyNodeItPrefers", "allot", 0, kGrids,
                   dirty_then_clean(), whole(1), "dirty-node"},
        CarbonCase{"OffFirstFitKeepsTheDirtyNodeItPrefers", "first-fit", 0, kGrids,
                   dirty_then_clean(), share(500), "dirty-node"},
        CarbonCase{"OnARequestWithNoRegionLandsOnTheCleanNode", "allot", 1, kGrids,
                   dirty_then_clean(), whole(1), "clean-node"},
        CarbonCase{"OnFirstFitToo", "first-fit", 1, kGrids, dirty_then_clean(), share(500),
                   "clean-node"},
        CarbonCase{"OnARequestPinnedToTheDirtyRegionStillGoesThere", "allot", 1, kGrids,
                   dirty_then_clean(), in_region(whole(1), "dirty"), "dirty-node"},
        CarbonCase{"OnTheIntensitiesDecideNotTheRegionNames",
                   "allot",
                   1,
                   {{"clean", 800}, {"dirty", 700}},
                   dirty_then_clean(),
                   whole(1),
                   "dirty-node"},
        CarbonCase{"OnNoKnownIntensityChangesNothing",
                   "allot",
                   1,
                   {},
                   dirty_then_clean(),
                   whole(1),
                   "dirty-node"},
        CarbonCase{"OnAnUnknownRegionCountsAsTheWorstKnownSoTheCleanNodeWins",
                   "allot",
                   1,
                   kGrids,
                   {node_in("unknown-node", "nowhere"), node_in("clean-node", "clean")},
                   whole(1),
                   "clean-node"},
        CarbonCase{"OnAnUnknownRegionTiesWithTheWorstKnownAndTheTieGoesToTheFirstNode",
                   "allot",
                   1,
                   kGrids,
                   {node_in("unknown-node", "nowhere"), node_in("dirty-node", "dirty")},
                   whole(1),
                   "unknown-node"},
        // Best-fit takes the tightest GPU for a share, the carbon plugin the lowest: the base
        // policy's plugin, listed first, still picks the GPU on the node that carbon chose.
        CarbonCase{"OnTheBasePolicyStillPicksTheGpus",
                   "best-fit",
                   1,
                   kGrids,
                   {node_in("dirty-node", "dirty", {1000, 600}),
                    node_in("clean-node", "clean", {1000, 600})},
                   share(500),
                   "clean-node",
                   {1}},
        // Best-fit prefers the dirty node by 400 GPU milli left; at weight 1 the 650 g/kWh
        // between the regions is worth 6.5 points, at weight 100 it is worth 650.
        CarbonCase{"AtWeightOneAMuchBetterFitStillWins",
                   "best-fit",
                   1,
                   kGrids,
                   {node_in("dirty-node", "dirty", {1000, 600}), node_in("clean-node", "clean")},
                   share(500),
                   "dirty-node"},
        CarbonCase{"AtAHeavyWeightTheCleanerRegionOutweighsTheFit",
                   "best-fit",
                   100,
                   kGrids,
                   {node_in("dirty-node", "dirty", {1000, 600}), node_in("clean-node", "clean")},
                   share(500),
                   "clean-node"}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  std::map<std::string, double> grids;
  std::string region;
  double score;
};

class CarbonScore : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(CarbonScore, IsMinusOnePointPerHundredGramsPerKwh) {
  const ScoreCase& c = GetParam();
  const auto plugin = internal::carbon_score();
  EXPECT_EQ(plugin->name(), "carbon");
  CycleState cycle;
  cycle.carbon_g_per_kwh = c.grids;
  std::vector<int> gpus;
  const NodeView node = make_node("n", {600, 1000, 1000}, "A100-80GB", 64000, c.region);
  EXPECT_DOUBLE_EQ(plugin->score(cycle, whole(2), node, gpus), c.score);
  // Alone, it takes the lowest free GPUs, as first-fit does.
  EXPECT_EQ(gpus, (std::vector<int>{1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Carbon, CarbonScore,
                         ::testing::Values(ScoreCase{"CleanRegion", kGrids, "clean", -0.5},
                                           ScoreCase{"DirtyRegion", kGrids, "dirty", -7.0},
                                           ScoreCase{"UnknownRegionCountsAsTheWorstKnown", kGrids,
                                                     "nowhere", -7.0},
                                           ScoreCase{"NothingKnownScoresZero", {}, "clean", 0.0}),
                         [](const auto& info) { return info.param.name; });

TEST(Carbon, AddedPluginsMustBeKnownAndWeighedAboveZero) {
  struct Bad {
    AddedScore added;
    std::string message;
  };
  for (const Bad& bad :
       {Bad{{.plugin = "greenest", .weight = 1},
            "unknown score plugin \"greenest\"; known: carbon"},
        Bad{{.plugin = "carbon", .weight = 0}, "needs a weight above 0, not 0"},
        Bad{{.plugin = "carbon", .weight = -2}, "needs a weight above 0, not -2"}}) {
    auto policy = make_policy("allot", {bad.added});
    ASSERT_FALSE(policy.has_value()) << bad.message;
    EXPECT_EQ(policy.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(policy.error().message.find(bad.message), std::string::npos)
        << policy.error().message;
  }
  auto unknown = make_policy("greenest-first", {});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("known: first-fit, best-fit"), std::string::npos);
  EXPECT_EQ(added_score_names(), std::vector<std::string_view>{"carbon"});
}

// A node that the Placer is told moved to another region is scored by its new region.
TEST(Carbon, PlacerRescoresANodeThatMovedRegion) {
  auto policy = make_policy_with_carbon("allot", 1);
  ASSERT_TRUE(policy.has_value());
  CycleState cycle = worked_cycle();
  cycle.carbon_g_per_kwh = kGrids;
  Placer placer(**policy, cycle, dirty_then_clean());
  std::string why;
  ASSERT_EQ(placer.place(whole(1), why)->node, 1U);
  NodeView moved = placer.nodes()[0];
  moved.region = "clean";
  placer.update(0, moved);
  NodeView other = placer.nodes()[1];
  other.region = "dirty";
  placer.update(1, other);
  EXPECT_EQ(placer.place(whole(1), why)->node, 0U);
}

}  // namespace
}  // namespace allot::sched::testing
