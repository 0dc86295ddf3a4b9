#include "sim/replay.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/trace.h"

namespace allot::sim {
namespace {

// First fit, written here so that these tests do not depend on the registry's policies: the
// first node with the CPU, memory and GPUs, taking its lowest-numbered GPUs that fit.
class FirstFit final : public sched::Policy {
 public:
  std::string_view name() const override { return "test-first-fit"; }
  std::optional<sched::Choice> place(const sched::CycleState& /*cycle*/,
                                     const sched::Request& request,
                                     const std::vector<sched::NodeView>& nodes,
                                     std::string& why) const override {
    for (size_t n = 0; n < nodes.size(); ++n) {
      const sched::NodeView& node = nodes[n];
      if (node.free_cpu_milli < request.cpu_milli || node.free_memory_mib < request.memory_mib) {
        continue;
      }
      const int need_milli = request.gpus > 0 ? 1000 : request.gpu_milli;
      const size_t need_count =
          request.gpus > 0 ? static_cast<size_t>(request.gpus) : (request.gpu_milli > 0 ? 1 : 0);
      std::vector<int> gpus;
      for (const sched::GpuSlot& gpu : node.gpus) {
        if (gpus.size() < need_count && gpu.free_milli >= need_milli) gpus.push_back(gpu.index);
      }
      if (gpus.size() == need_count) return sched::Choice{n, gpus};
    }
    why = "no node fits";
    return std::nullopt;
  }
};

sched::NodeView node(std::string id, int gpus, int64_t cpu_milli = 10000) {
  sched::NodeView view{.id = std::move(id),
                       .cpu_milli = cpu_milli,
                       .memory_mib = 10000,
                       .free_cpu_milli = cpu_milli,
                       .free_memory_mib = 10000};
  for (int i = 0; i < gpus; ++i) view.gpus.push_back(sched::GpuSlot{.index = i, .model = "T4"});
  return view;
}

sched::Request share(int milli) { return sched::Request{.gpu_milli = milli, .cpu_milli = 100}; }
sched::Request whole(int gpus) { return sched::Request{.gpus = gpus, .cpu_milli = 100}; }
sched::Request cpu_only(int64_t cpu_milli) { return sched::Request{.cpu_milli = cpu_milli}; }

int64_t total_milli(const std::vector<sched::Request>& pods) {
  int64_t total = 0;
  for (const sched::Request& pod : pods) total += gpu_milli_of(pod);
  return total;
}

// Each pod's GPU milli and CPU in order: enough to tell two orders of the same pods apart.
std::vector<int64_t> shape(const std::vector<sched::Request>& pods) {
  std::vector<int64_t> shapes;
  shapes.reserve(pods.size());
  for (const sched::Request& pod : pods) {
    shapes.push_back(gpu_milli_of(pod) * 100000 + pod.cpu_milli);
  }
  return shapes;
}

TEST(ParseSeeds, TakesOneSeedOrAnInclusiveRange) {
  EXPECT_EQ(parse_seeds("42")->first, 42U);
  EXPECT_EQ(parse_seeds("42")->last, 42U);
  EXPECT_EQ(parse_seeds("42-51")->first, 42U);
  EXPECT_EQ(parse_seeds("42-51")->last, 51U);
  EXPECT_EQ(parse_seeds("7-7")->last, 7U);
  EXPECT_EQ(parse_seeds("0")->first, 0U);
}

TEST(ParseSeeds, RefusesAnythingElse) {
  for (const char* text : {"", "-", "a", "42-", "-42", "51-42", "4 2", "42-51-60", "+1", "1.5",
                           "0x10", "0-1000", "99999999999999999999"}) {
    Result<SeedRange> seeds = parse_seeds(text);
    ASSERT_FALSE(seeds) << text;
    EXPECT_EQ(seeds.error().code, ErrorCode::kInvalidArgument);
    EXPECT_TRUE(seeds.error().message.starts_with(fmt::format("--seeds '{}'", text)));
  }
}

TEST(DrawBelow, StaysInRangeAndIsTheSameForTheSameSeed) {
  std::mt19937_64 a(7);
  std::mt19937_64 b(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t value = draw_below(a, 6);
    EXPECT_LT(value, 6U);
    EXPECT_EQ(value, draw_below(b, 6));
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 6U);
}

const std::vector<sched::Request> kTrace = {share(500), whole(1), whole(2), cpu_only(100),
                                            share(250)};  // 3750 GPU milli.

TEST(ResizeWorkload, GrowsByDrawsUntilTheNextWouldPassTheTarget) {
  std::mt19937_64 rng(42);
  Result<std::vector<sched::Request>> pods = resize_workload(kTrace, 20000, rng);
  ASSERT_TRUE(pods);
  EXPECT_TRUE(std::equal(kTrace.begin(), kTrace.end(), pods->begin(), [](auto& a, auto& b) {
    return gpu_milli_of(a) == gpu_milli_of(b);
  })) << "the trace itself comes first";
  EXPECT_LE(total_milli(*pods), 20000);
  EXPECT_GT(total_milli(*pods), 20000 - 2000);  // The largest pod is 2000.
}

TEST(ResizeWorkload, ShrinksByRemovingRandomPods) {
  std::mt19937_64 rng(42);
  Result<std::vector<sched::Request>> pods = resize_workload(kTrace, 1000, rng);
  ASSERT_TRUE(pods);
  EXPECT_LE(total_milli(*pods), 1000);
  EXPECT_LT(pods->size(), kTrace.size());
}

TEST(ResizeWorkload, IsTheSameForTheSameSeedOnly) {
  std::mt19937_64 a(42);
  std::mt19937_64 b(42);
  std::mt19937_64 c(43);
  const std::vector<sched::Request> first = *resize_workload(kTrace, 50000, a);
  EXPECT_EQ(shape(first), shape(*resize_workload(kTrace, 50000, b)));
  EXPECT_NE(shape(first), shape(*resize_workload(kTrace, 50000, c)));
}

TEST(ResizeWorkload, RefusesToGrowATraceWithoutGpuPods) {
  std::mt19937_64 rng(42);
  Result<std::vector<sched::Request>> pods = resize_workload({cpu_only(1)}, 1000, rng);
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.error().code, ErrorCode::kInvalidArgument);
}

// Shuffles copies of `items` with seeds 42, 42 and 43 and compares them through `key`: the same
// seed gives the same order, another seed another, and each is a permutation of `items`.
template <typename T, typename Key>
void expect_seeded_permutation(const std::vector<T>& items,
                               void (*shuffle)(std::vector<T>&, std::mt19937_64&), Key key) {
  const auto shuffled = [&](uint64_t seed) {
    std::vector<T> copy = items;
    std::mt19937_64 rng(seed);
    shuffle(copy, rng);
    return key(copy);
  };
  const auto a = shuffled(42);
  EXPECT_EQ(a, shuffled(42));
  EXPECT_NE(a, shuffled(43));
  EXPECT_NE(a, key(items));
  auto sorted = a;
  auto expected = key(items);
  std::ranges::sort(sorted);
  std::ranges::sort(expected);
  EXPECT_EQ(sorted, expected);
}

TEST(ShuffleArrivals, IsAPermutationThatIsTheSameForTheSameSeedOnly) {
  std::vector<sched::Request> pods;
  for (int i = 1; i <= 50; ++i) pods.push_back(share(i));
  expect_seeded_permutation(pods, &shuffle_arrivals, shape);
}

TEST(ShuffleNodes, IsAPermutationThatIsTheSameForTheSameSeedOnly) {
  std::vector<sched::NodeView> nodes;
  nodes.reserve(30);
  for (int i = 0; i < 30; ++i) nodes.push_back(node(fmt::format("n{}", i), 1 + i % 8));
  expect_seeded_permutation(nodes, &shuffle_nodes, [](const std::vector<sched::NodeView>& list) {
    std::vector<std::string> out;
    out.reserve(list.size());
    for (const sched::NodeView& n : list) out.push_back(n.id);
    return out;
  });
}

// Two nodes of one GPU: capacity 2000 milli, so 1 % is 20 milli.
TEST(PlaceArrivals, RecordsArrivedAndAllocatedAfterEveryPod) {
  std::vector<sched::NodeView> nodes = {node("n0", 1), node("n1", 1)};
  const std::vector<sched::Request> arrivals = {
      share(500),          // n0: arrived 500 (25 %), allocated 25 %.
      share(600),          // n0 has 500 left, so n1: arrived 1100 (55 %), allocated 55 %.
      whole(1),            // No whole GPU is free: refused. Arrived 2100 (105 %), allocated 55 %.
      share(8),            // n0: arrived 2108 (105.4 -> 105 %), allocated 55.4 %.
      cpu_only(100),       // n0: no GPU milli, another point at 105 % of 55.4 %.
      cpu_only(1000000)};  // Fits nowhere: refused, a last point at 105 % of 55.4 %.
  const SeedRun run =
      place_arrivals(FirstFit(), sched::CycleState{}, nodes, arrivals, capacity_milli(nodes));
  EXPECT_EQ(run.pods, 6U);
  EXPECT_EQ(run.placed, 4U);
  EXPECT_EQ(run.arrived_milli, 2108);
  EXPECT_EQ(run.allocated_milli, 1108);
  ASSERT_EQ(run.alloc_pct_by_arrived.size(), 3U);
  EXPECT_DOUBLE_EQ(run.alloc_pct_by_arrived.at(25), 25.0);
  EXPECT_DOUBLE_EQ(run.alloc_pct_by_arrived.at(55), 55.0);
  EXPECT_NEAR(run.alloc_pct_by_arrived.at(105), (55.0 + 3 * 55.4) / 4, 1e-9);
  EXPECT_EQ(nodes[0].gpus[0].free_milli, 492);
  EXPECT_EQ(nodes[1].gpus[0].free_milli, 400);
  EXPECT_EQ(nodes[0].free_cpu_milli, 10000 - 300);
}

TEST(ReplaySeed, IsTheSameForTheSameSeedAndLeavesTheNodesAlone) {
  const std::vector<sched::NodeView> nodes = {node("n0", 4), node("n1", 2), node("n2", 2)};
  Result<SeedRun> a = replay_seed(FirstFit(), nodes, kTrace, 42, 1.3);
  Result<SeedRun> b = replay_seed(FirstFit(), nodes, kTrace, 42, 1.3);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->alloc_pct_by_arrived, b->alloc_pct_by_arrived);
  EXPECT_EQ(a->pods, b->pods);
  EXPECT_LE(a->arrived_milli, 10400);  // 1.3 x 8000.
  EXPECT_EQ(nodes[0].gpus[0].free_milli, 1000);
}

// The registry's policies through the same harness: deterministic, and never allocating more
// than arrived or than the cluster holds.
TEST(ReplaySeed, RunsEveryRegisteredPolicy) {
  const std::vector<sched::NodeView> nodes = {node("n0", 8), node("n1", 4), node("n2", 2)};
  for (std::string_view name : sched::policy_names()) {
    Result<std::unique_ptr<sched::Policy>> policy = sched::make_policy(name);
    ASSERT_TRUE(policy) << name;
    Result<SeedRun> a = replay_seed(**policy, nodes, kTrace, 42, 1.3);
    Result<SeedRun> b = replay_seed(**policy, nodes, kTrace, 42, 1.3);
    ASSERT_TRUE(a) << name << ": " << a.error().message;
    EXPECT_EQ(a->alloc_pct_by_arrived, b->alloc_pct_by_arrived) << name;
    EXPECT_LE(a->allocated_milli, a->arrived_milli) << name;
    EXPECT_LE(a->allocated_milli, capacity_milli(nodes)) << name;
    EXPECT_GT(a->placed, 0U) << name;
  }
}

TEST(ReplaySeed, RefusesATuneOutOfRangeAndNodesWithoutGpus) {
  const std::vector<sched::NodeView> nodes = {node("n0", 1)};
  EXPECT_FALSE(replay_seed(FirstFit(), nodes, kTrace, 42, 0));
  EXPECT_FALSE(replay_seed(FirstFit(), nodes, kTrace, 42, 11));
  EXPECT_FALSE(replay_seed(FirstFit(), {node("cpu", 0)}, kTrace, 42, 1.3));
}

TEST(Summarise, TakesMeansAndTheSampleSdOverSeeds) {
  SeedRun a;
  a.pods = 10;
  a.placement_s = 1;
  a.alloc_pct_by_arrived = {{90, 88.0}, {100, 90.0}};
  SeedRun b;
  b.pods = 20;
  b.placement_s = 2;
  b.alloc_pct_by_arrived = {{90, 86.0}, {100, 94.0}, {131, 99.0}};
  const Report report = summarise({a, b}, 8);
  EXPECT_EQ(report.gpus_total, 8);
  EXPECT_DOUBLE_EQ(report.pods_arrived, 15.0);
  EXPECT_DOUBLE_EQ(*report.unallocated_pct_at_100_mean, 8.0);
  EXPECT_DOUBLE_EQ(*report.unallocated_pct_at_100_sd, std::sqrt(8.0));
  EXPECT_DOUBLE_EQ(report.decisions_per_s, 10.0);
  EXPECT_DOUBLE_EQ(*report.alloc_pct_by_arrived.at(90), 87.0);
  EXPECT_FALSE(report.alloc_pct_by_arrived.at(95));
  EXPECT_EQ(report.alloc_pct_by_arrived.size(), 41U);  // 90..130.
}

TEST(Summarise, LeavesUnallocatedUnknownWhenASeedSteppedOver100) {
  SeedRun a;
  a.alloc_pct_by_arrived = {{99, 90.0}, {101, 91.0}};
  EXPECT_FALSE(summarise({a}, 1).unallocated_pct_at_100_mean);
}

TEST(ToJson, HasExactlyTheBenchmarksFields) {
  SeedRun a;
  a.pods = 3;
  a.alloc_pct_by_arrived = {{100, 95.12345}};
  Report report = summarise({a}, 4);
  report.policy = "fgd";
  report.trace = "default";
  report.seeds = "42-51";
  const nlohmann::ordered_json json = to_json(report);
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"policy", "trace", "seeds", "gpus_total",
                                            "pods_arrived", "unallocated_pct_at_100",
                                            "alloc_pct_by_arrived", "decisions_per_s", "wall_s"}));
  EXPECT_EQ(json["alloc_pct_by_arrived"].begin().key(), "90");
  EXPECT_EQ(json["seeds"], "42-51");
  EXPECT_EQ(json["alloc_pct_by_arrived"].size(), 41U);
  EXPECT_DOUBLE_EQ(json["alloc_pct_by_arrived"]["100"].get<double>(), 95.123);
  EXPECT_TRUE(json["alloc_pct_by_arrived"]["130"].is_null());
  EXPECT_DOUBLE_EQ(json["unallocated_pct_at_100"]["mean"].get<double>(), 4.877);
  EXPECT_DOUBLE_EQ(json["unallocated_pct_at_100"]["sd"].get<double>(), 0.0);
  EXPECT_NE(to_table(report).find("4.88"), std::string::npos);
}

}  // namespace
}  // namespace allot::sim
