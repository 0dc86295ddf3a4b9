#include "sched/sched.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "sched/test_util.h"

// Inside the helpers' namespace (sched/test_util.h), so that they need no using-declarations.
namespace allot::sched::testing {
namespace {

struct PolicyCase {
  std::string name;
  std::string policy;
  std::vector<NodeView> nodes;
  Request request;
  size_t node;
  std::vector<int> gpus;
};

// An idle node and one whose last two GPUs are partly used.
std::vector<NodeView> empty_and_worked() {
  return {make_node("empty", {1000, 1000, 1000, 1000}),
          make_node("worked", {1000, 1000, 600, 200}, "A100-80GB", 32000)};
}

class PolicyChoice : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(PolicyChoice, PicksNodeAndGpus) {
  const PolicyCase& c = GetParam();
  auto policy = make_policy(c.policy);
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ((*policy)->name(), c.policy);
  std::string why;
  const auto choice = (*policy)->place(worked_cycle(), c.request, c.nodes, why);
  ASSERT_TRUE(choice.has_value()) << why;
  EXPECT_EQ(choice->node, c.node);
  EXPECT_EQ(choice->gpus, c.gpus);
}

// n0 full, n1 empty, n2 partly used: the usual three-node cluster below.
std::vector<NodeView> three() {
  return {make_node("n0", {0, 0}), make_node("n1", {1000, 1000}), make_node("n2", {1000, 600})};
}

INSTANTIATE_TEST_SUITE_P(
    Sched, PolicyChoice,
    ::testing::Values(
        PolicyCase{"FirstFitTakesLowestNodeThatFits", "first-fit", three(), share(500), 1, {0}},
        PolicyCase{"FirstFitWholeSkipsPartlyUsedGpu",
                   "first-fit",
                   {make_node("a", {600, 1000})},
                   whole(1),
                   0,
                   {1}},
        PolicyCase{
            "BestFitLeavesLeastFreeAndTakesTightestGpu", "best-fit", three(), share(500), 2, {1}},
        PolicyCase{"SpreadTakesMostFreeNode", "spread", three(), share(500), 1, {0}},
        PolicyCase{"PackingSharesAPartlyUsedGpu", "gpu-packing", three(), share(500), 2, {1}},
        PolicyCase{"PackingWholeGoesToNodeWithFewestFreeGpus",
                   "gpu-packing",
                   {make_node("a", {1000, 1000, 1000, 1000}), make_node("b", {1000, 0, 0, 0})},
                   whole(1),
                   1,
                   {0}},
        PolicyCase{"DotProductPrefersFreeCpuForCpuHeavyWork",
                   "dot-product",
                   {make_node("a", {1000, 1000}, "A100-80GB", 16000),
                    make_node("b", {1000, 1000}, "A100-80GB", 64000)},
                   share(500, 8000),
                   1,
                   {0}},
        PolicyCase{
            "FgdPicksLeastFragmentationIncrease", "fgd", empty_and_worked(), share(500), 1, {2}},
        PolicyCase{"FgdTiesGoToLowestNode",
                   "fgd",
                   {make_node("a", {1000, 1000}), make_node("b", {1000, 1000})},
                   whole(1),
                   0,
                   {0}},
        PolicyCase{
            "AllotAgreesWithFgdOnClearGradient", "allot", empty_and_worked(), share(500), 1, {2}}),
    [](const auto& info) { return info.param.name; });

struct FilterCase {
  std::string name;
  NodeView node;
  Request request;
  std::string why;  // Empty: the node fits.
};

class Filters : public ::testing::TestWithParam<FilterCase> {};

TEST_P(Filters, SayWhyANodeIsTurnedAway) {
  const FilterCase& c = GetParam();
  auto policy = make_policy("first-fit");
  ASSERT_TRUE(policy.has_value());
  std::string why;
  const auto choice = (*policy)->place({}, c.request, {c.node}, why);
  if (c.why.empty()) {
    EXPECT_TRUE(choice.has_value()) << why;
  } else {
    EXPECT_FALSE(choice.has_value());
    EXPECT_EQ(why, "no node fits: 1 of 1 nodes: " + c.why + " (" + c.node.id + ")");
  }
}

TEST(Explain, EveryReasonIsCountedMostCommonFirst) {
  auto policy = make_policy("allot");
  ASSERT_TRUE(policy.has_value());
  NodeView elsewhere = make_node("far", {1000, 1000});
  elsewhere.region = "us";
  const std::vector<NodeView> nodes = {make_node("full-1", {0, 0}), elsewhere,
                                       make_node("full-2", {0, 200})};
  Request request{.gpus = 1, .region = ""};
  std::string why;
  EXPECT_TRUE((*policy)->place({}, request, nodes, why).has_value());
  request.region = "eu-1";
  EXPECT_FALSE((*policy)->place({}, request, nodes, why).has_value());
  EXPECT_EQ(why,
            "no node fits: 2 of 3 nodes: needs 1 whole free GPUs, 0 free (full-1, ...); "
            "1 of 3 nodes: node is in region us, not eu-1 (far)");
}

Request with_models(Request r, std::vector<std::string> models) {
  r.models = std::move(models);
  return r;
}
Request in_region(Request r, std::string region) {
  r.region = std::move(region);
  return r;
}
NodeView unhealthy(NodeView node, const std::vector<size_t>& bad) {
  for (size_t i : bad) node.gpus[i].healthy = false;
  return node;
}

INSTANTIATE_TEST_SUITE_P(
    Sched, Filters,
    ::testing::Values(
        FilterCase{"ShareFitsOnAGpuWithEnoughFree", make_node("n", {400, 700}), share(700), ""},
        FilterCase{"ShareNeedsOneGpuWithEnoughFree", make_node("n", {400, 600}), share(700),
                   "no GPU with 700 milli free (most free: 600)"},
        FilterCase{"WholeGpusMustBeWhollyFree", make_node("n", {1000, 999}), whole(2),
                   "needs 2 whole free GPUs, 1 free"},
        FilterCase{"CpuMustFit", make_node("n", {1000}, "A100-80GB", 500), share(100),
                   "needs 1000 CPU milli, 500 free"},
        FilterCase{"FamilyMatchesCatalogModel", make_node("n", {1000}, "H100-80GB"),
                   with_models(whole(1), {"H100"}), ""},
        FilterCase{"OtherModelIsRefused", make_node("n", {1000}, "A100-80GB"),
                   with_models(whole(1), {"H100"}),
                   "no healthy GPU of model H100 (node has A100-80GB)"},
        FilterCase{"RegionMustMatchWhenSet", make_node("n", {1000}), in_region(whole(1), "us-2"),
                   "node is in region eu-1, not us-2"},
        FilterCase{"AllUnhealthyNodeIsOut", unhealthy(make_node("n", {1000, 1000}), {0, 1}),
                   whole(1), "all 2 GPUs are unhealthy"},
        FilterCase{"UnhealthyGpusAreNotCounted", unhealthy(make_node("n", {1000, 1000}), {0}),
                   whole(2), "needs 2 whole free GPUs, 1 free"},
        FilterCase{"CpuOnlyWorkIgnoresGpus", make_node("n", {0}), Request{.cpu_milli = 100}, ""}),
    [](const auto& info) { return info.param.name; });

TEST(Sched, UnhealthyGpuIsSkippedForPlacement) {
  auto policy = make_policy("first-fit");
  ASSERT_TRUE(policy.has_value());
  std::string why;
  const auto choice =
      (*policy)->place({}, whole(1), {unhealthy(make_node("n", {1000, 1000}), {0})}, why);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->gpus, std::vector<int>{1});
}

TEST(Sched, UnknownPolicyIsInvalidArgumentListingKnownOnes) {
  auto policy = make_policy("random");
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(policy.error().message.find("fgd"), std::string::npos);
}

TEST(Sched, EveryListedPolicyIsMadeAndDefaultIsListed) {
  for (std::string_view name : policy_names()) EXPECT_TRUE(make_policy(name).has_value()) << name;
  EXPECT_TRUE(make_policy(kDefaultPolicy).has_value());
}

TEST(Sched, AllocateThenReleaseRestoresNode) {
  const NodeView before = make_node("n", {1000, 1000, 300});
  NodeView node = before;
  const Request w = whole(2, 4000);
  const Request s = share(250, 500);
  allocate(node, w, Choice{.node = 0, .gpus = {0, 1}});
  allocate(node, s, Choice{.node = 0, .gpus = {2}});
  EXPECT_EQ(node.gpus[0].free_milli, 0);
  EXPECT_EQ(node.gpus[1].free_milli, 0);
  EXPECT_EQ(node.gpus[2].free_milli, 50);
  EXPECT_EQ(node.free_cpu_milli, before.free_cpu_milli - 4500);
  EXPECT_EQ(node.free_memory_mib, before.free_memory_mib - 2048);
  release(node, s, Choice{.node = 0, .gpus = {2}});
  release(node, w, Choice{.node = 0, .gpus = {0, 1}});
  EXPECT_EQ(node.free_cpu_milli, before.free_cpu_milli);
  EXPECT_EQ(node.free_memory_mib, before.free_memory_mib);
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    EXPECT_EQ(node.gpus[i].free_milli, before.gpus[i].free_milli);
  }
}

TEST(Sched, TypicalShapesAreTheMostFrequentCoveringShare) {
  std::vector<Request> workload;
  workload.reserve(10);
  for (int i = 0; i < 6; ++i) workload.push_back(share(500));
  for (int i = 0; i < 3; ++i) workload.push_back(whole(1));
  workload.push_back(whole(8));
  const CycleState cycle = typical_shapes(workload, 0.9);
  ASSERT_EQ(cycle.typical.size(), 2U);
  EXPECT_EQ(cycle.typical[0].first.gpu_milli, 500);
  EXPECT_DOUBLE_EQ(cycle.typical[0].second, 6.0 / 9.0);
  EXPECT_EQ(cycle.typical[1].first.gpus, 1);
  EXPECT_DOUBLE_EQ(cycle.typical[1].second, 3.0 / 9.0);
}

// The FGD paper's score ties near-equal nodes and the earlier node wins: node b (listed first)
// gains 40 milli of fragment, node a 30 (see frag_test.cc), both score 49, so fgd takes b.
TEST(Sched, FgdBreaksTiesOfThePaperScoreByNodeOrder) {
  CycleState cycle;
  cycle.typical.emplace_back(share(500, 1000), 0.99);
  cycle.typical.emplace_back(whole(1, 30000), 0.01);
  const std::vector<NodeView> nodes = {
      make_node("b", {1000, 1000, 1000, 1000, 1000}, "A100-80GB", 31000),
      make_node("a", {1000, 1000, 1000, 1000}, "A100-80GB", 33000)};
  auto fgd = make_policy("fgd");
  ASSERT_TRUE(fgd.has_value());
  std::string why;
  const auto choice = (*fgd)->place(cycle, whole(1, 4000), nodes, why);
  ASSERT_TRUE(choice.has_value()) << why;
  EXPECT_EQ(choice->node, 0U);
  EXPECT_EQ(choice->gpus, std::vector<int>{0});
}

TEST(Sched, TypicalShapesIgnoreMemoryAndRegionButKeepCpuAndModels) {
  // Six shares of 500 milli in three memory sizes and two regions are one shape; a share on a
  // named model and one with more CPU are shapes of their own; a CPU-only request is a shape too.
  std::vector<Request> workload;
  workload.reserve(10);
  for (int i = 0; i < 6; ++i) {
    Request r = share(500);
    r.memory_mib = int64_t{1024} * (1 + i % 3);
    r.region = i % 2 == 0 ? "eu-1" : "us-1";
    workload.push_back(r);
  }
  Request t4 = share(500);
  t4.models = {"T4"};
  workload.push_back(t4);
  workload.push_back(t4);
  workload.push_back(share(500, 8000));
  workload.push_back(Request{.cpu_milli = 4000, .memory_mib = 8192});
  const CycleState cycle = typical_shapes(workload, 1.0);
  ASSERT_EQ(cycle.typical.size(), 4U);
  EXPECT_DOUBLE_EQ(cycle.typical[0].second, 0.6);
  EXPECT_EQ(cycle.typical[0].first.memory_mib, 0);
  EXPECT_TRUE(cycle.typical[0].first.region.empty());
  EXPECT_EQ(cycle.typical[1].first.models, std::vector<std::string>{"T4"});
  EXPECT_DOUBLE_EQ(cycle.typical[1].second, 0.2);
  EXPECT_EQ(cycle.typical[2].first.cpu_milli, 8000);
  EXPECT_EQ(cycle.typical[3].first.gpu_milli + cycle.typical[3].first.gpus, 0);
}

TEST(QueueSort, PriorityThenWeightedShareThenAgeThenId) {
  const QueueSortPlugin& sort = (*make_policy("allot"))->queue_sort();
  EXPECT_EQ(sort.name(), "priority-fair-share");
  const QueuedRequest spot{.priority = 1, .weighted_share = 0, .created_ms = 1, .id = "a"};
  const QueuedRequest heavy{.priority = 0, .weighted_share = 0.5, .created_ms = 1, .id = "b"};
  const QueuedRequest light_new{.priority = 0, .weighted_share = 0.1, .created_ms = 9, .id = "c"};
  const QueuedRequest light_old{.priority = 0, .weighted_share = 0.1, .created_ms = 2, .id = "d"};
  std::vector<QueuedRequest> queue = {spot, heavy, light_new, light_old};
  std::sort(queue.begin(), queue.end(),
            [&](const auto& a, const auto& b) { return sort.less(a, b); });
  std::vector<std::string> order;
  order.reserve(queue.size());
  for (const auto& q : queue) order.push_back(q.id);
  EXPECT_EQ(order, (std::vector<std::string>{"d", "c", "b", "a"}));
}

TEST(Reserve, TheDefaultReservePluginTakesAndGivesBackWhatAChoiceUses) {
  auto policy = make_policy("best-fit");
  ASSERT_TRUE(policy.has_value());
  NodeView node = make_node("n", {1000, 1000, 1000});
  const NodeView before = node;
  const Request share{.gpu_milli = 300, .cpu_milli = 4000, .memory_mib = 1024};
  const Choice choice{.node = 0, .gpus = {1}};
  (*policy)->reserve(node, share, choice);
  EXPECT_EQ(node.gpus[1].free_milli, 700);
  EXPECT_EQ(node.free_cpu_milli, before.free_cpu_milli - 4000);
  EXPECT_EQ(node.free_memory_mib, before.free_memory_mib - 1024);
  (*policy)->unreserve(node, share, choice);
  EXPECT_EQ(node.gpus[1].free_milli, 1000);
  EXPECT_EQ(node.free_cpu_milli, before.free_cpu_milli);
  EXPECT_EQ(resources_reserve().name(), "resources");
}

}  // namespace
}  // namespace allot::sched::testing
