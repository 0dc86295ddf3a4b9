#include <gtest/gtest.h>

#include <random>

#include "sched/sched.h"
#include "sched/test_util.h"

namespace allot::sched {
namespace {

// A random cluster of mixed models, regions, health and fill, with a random request mix.
struct Random {
  std::mt19937 rng;
  explicit Random(unsigned seed) : rng(seed) {}
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  NodeView node(int i) {
    static const std::vector<std::string> kModels = {"A100-80GB", "H100-80GB", "L4-24GB"};
    std::vector<int> free(static_cast<size_t>(pick(1, 8)));
    for (int& f : free) f = pick(0, 3) == 0 ? pick(0, 1000) : 1000;
    NodeView n =
        testing::make_node("n" + std::to_string(i), free, kModels[static_cast<size_t>(pick(0, 2))],
                           pick(4000, 64000), pick(0, 3) == 0 ? "us-1" : "eu-1");
    if (pick(0, 9) == 0) n.gpus[0].healthy = false;
    if (pick(0, 9) == 0) n.gpus.back().model = "A100-80GB";  // Some nodes mix models.
    return n;
  }

  Request request() {
    Request r = pick(0, 1) == 0 ? testing::share(pick(1, 999), pick(0, 8000))
                                : testing::whole(pick(0, 4), pick(0, 8000));
    if (pick(0, 4) == 0) r.models = {pick(0, 1) == 0 ? "H100" : "L4-24GB"};
    if (pick(0, 6) == 0) r.region = "us-1";
    return r;
  }
};

// The Placer's caches must never change an answer: every decision equals a fresh Policy::place.
TEST(Placer, DecidesExactlyAsPolicyPlaceOverRandomClusters) {
  for (std::string_view name : policy_names()) {
    const unsigned seed = 7;
    SCOPED_TRACE(::testing::Message() << "policy " << name << " seed " << seed);
    Random random(seed);
    std::vector<NodeView> nodes;
    nodes.reserve(40);
    for (int i = 0; i < 40; ++i) nodes.push_back(random.node(i));
    std::vector<Request> mix;
    mix.reserve(12);
    for (int i = 0; i < 12; ++i) mix.push_back(random.request());
    const CycleState cycle = typical_shapes(mix, 0.9);
    auto policy = make_policy(name);
    ASSERT_TRUE(policy.has_value());
    Placer placer(**policy, cycle, nodes);
    std::vector<std::pair<Request, Choice>> placed;
    for (int step = 0; step < 300; ++step) {
      const Request& r = mix[static_cast<size_t>(random.pick(0, 11))];
      std::string why_fresh;
      std::string why_placer;
      const auto fresh = (*policy)->place(cycle, r, placer.nodes(), why_fresh);
      const auto cached = placer.place(r, why_placer);
      ASSERT_EQ(fresh.has_value(), cached.has_value()) << "step " << step;
      EXPECT_EQ(why_fresh, why_placer);
      if (fresh) {
        ASSERT_EQ(fresh->node, cached->node) << "step " << step;
        ASSERT_EQ(fresh->gpus, cached->gpus) << "step " << step;
        placer.allocate(r, *cached);
        placed.emplace_back(r, *cached);
      }
      if (!placed.empty() && random.pick(0, 3) == 0) {
        placer.release(placed.back().first, placed.back().second);
        placed.pop_back();
      }
    }
  }
}

TEST(Placer, UpdateTakesANewNodeStateAndNewModels) {
  auto policy = make_policy("fgd");
  ASSERT_TRUE(policy.has_value());
  Placer placer(**policy, testing::worked_cycle(), {testing::make_node("a", {1000})});
  Request h100 = testing::whole(1);
  h100.models = {"H100"};
  std::string why;
  EXPECT_FALSE(placer.place(h100, why).has_value());
  placer.update(0, testing::make_node("a", {1000}, "H100-80GB"));
  const auto choice = placer.place(h100, why);
  ASSERT_TRUE(choice.has_value()) << why;
  EXPECT_EQ(choice->node, 0U);
}

}  // namespace
}  // namespace allot::sched
