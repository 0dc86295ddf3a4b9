#include "sim/resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "sim/trace.h"

namespace allot::sim {
namespace {

// 100 pods: 20 CPU-only, 40 shares, 30 one-GPU, 10 eight-GPU; a quarter of the GPU pods of each
// kind are T4-only unless `constrained_one_gpu` is false (then no one-GPU pod is).
std::vector<sched::Request> trace(bool constrained_one_gpu = true) {
  std::vector<sched::Request> pods;
  pods.reserve(100);
  const auto add = [&](sched::Request pod, int i, int of) {
    if (4 * i < of && (pod.gpus != 1 || constrained_one_gpu)) pod.models = {"T4"};
    pods.push_back(std::move(pod));
  };
  for (int i = 0; i < 20; ++i) pods.push_back(sched::Request{.cpu_milli = 1000 + i});
  for (int i = 0; i < 40; ++i) {
    add(sched::Request{.gpu_milli = 100 + i, .cpu_milli = 2000, .memory_mib = 4096}, i, 40);
  }
  for (int i = 0; i < 30; ++i) add(sched::Request{.gpus = 1, .cpu_milli = 8000}, i, 30);
  for (int i = 0; i < 10; ++i) add(sched::Request{.gpus = 8, .cpu_milli = 64000}, i, 10);
  return pods;
}

struct Counts {
  int cpu = 0;
  int share = 0;
  int one = 0;
  int multi = 0;
  int constrained = 0;
};

Counts count(const std::vector<sched::Request>& pods) {
  Counts c;
  for (const sched::Request& pod : pods) {
    if (pod.gpus > 1) {
      ++c.multi;
    } else if (pod.gpus == 1) {
      ++c.one;
    } else if (pod.gpu_milli > 0) {
      ++c.share;
    } else {
      ++c.cpu;
    }
    c.constrained += pod.models.empty() ? 0 : 1;
  }
  return c;
}

TEST(Resample, KeepsTheSizeAndIsTheSameForTheSameSeedOnly) {
  const auto a = resample(trace(), {}, 7);
  const auto b = resample(trace(), {}, 7);
  const auto c = resample(trace(), {}, 8);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->size(), 100U);
  EXPECT_EQ(pods_csv(*a), pods_csv(*b));
  EXPECT_NE(pods_csv(*a), pods_csv(*c));
}

// 10,000 pods drawn from a trace of that size: each share within a few points of its target.
TEST(Resample, DrawsKindsAndConstraintsByTheMix) {
  std::vector<sched::Request> big;
  big.reserve(10000);
  for (int copy = 0; copy < 100; ++copy) {
    for (const sched::Request& pod : trace()) big.push_back(pod);
  }
  const auto as_is = resample(big, {}, 1);
  ASSERT_TRUE(as_is);
  const Counts same = count(*as_is);
  EXPECT_NEAR(same.cpu, 2000, 200);
  EXPECT_NEAR(same.share, 4000, 200);
  EXPECT_NEAR(same.constrained, 2000, 200);

  const auto mixed = resample(big, Mix{.share_pct = 75, .multi_pct = 5, .constrained_pct = 40}, 1);
  ASSERT_TRUE(mixed);
  const Counts c = count(*mixed);
  EXPECT_NEAR(c.cpu, 2000, 200);
  const double gpu = 10000.0 - c.cpu;
  EXPECT_NEAR(c.share / gpu, 0.75, 0.03);
  EXPECT_NEAR(c.multi / gpu, 0.05, 0.02);
  EXPECT_NEAR(c.one / gpu, 0.20, 0.03);
  EXPECT_NEAR(c.constrained / gpu, 0.40, 0.03);
}

TEST(Resample, RefusesMixesTheTraceCannotMake) {
  EXPECT_FALSE(resample(trace(), Mix{.share_pct = 101}, 1));
  EXPECT_FALSE(resample(trace(), Mix{.share_pct = 70, .multi_pct = 40}, 1));
  // No one-GPU pod names a model here, so constrained one-GPU pods cannot be drawn, unless the
  // mix asks for none.
  EXPECT_FALSE(resample(trace(false), Mix{.constrained_pct = 20}, 1));
  EXPECT_TRUE(
      resample(trace(false), Mix{.share_pct = 80, .multi_pct = 20, .constrained_pct = 20}, 1));
  EXPECT_TRUE(resample(trace(false), Mix{.constrained_pct = 0}, 1));
  EXPECT_FALSE(resample({sched::Request{.cpu_milli = 1}}, {}, 1));
}

TEST(Resample, ScalesEveryPodsCpuAndDrawsTheSamePods) {
  const auto plain = resample(trace(), {}, 5);
  const auto heavy = resample(trace(), Mix{.cpu_scale = 2.5}, 5);
  ASSERT_TRUE(plain && heavy);
  ASSERT_EQ(plain->size(), heavy->size());
  for (size_t i = 0; i < plain->size(); ++i) {
    EXPECT_EQ((*heavy)[i].cpu_milli,
              std::llround(2.5 * static_cast<double>((*plain)[i].cpu_milli)));
    EXPECT_EQ((*heavy)[i].gpus, (*plain)[i].gpus);
    EXPECT_EQ((*heavy)[i].gpu_milli, (*plain)[i].gpu_milli);
    EXPECT_EQ((*heavy)[i].models, (*plain)[i].models);
  }
  const auto tiny =
      resample({sched::Request{.gpu_milli = 500, .cpu_milli = 1}}, Mix{.cpu_scale = 0.1}, 5);
  ASSERT_TRUE(tiny);
  EXPECT_EQ(tiny->front().cpu_milli, 1);
  for (const double bad : {0.0, -1.0, 10.5, std::nan("")}) {
    const auto refused = resample(trace(), Mix{.cpu_scale = bad}, 5);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(PodsCsv, IsReadBackAsTheSamePods) {
  const auto pods = resample(trace(), {}, 3);
  ASSERT_TRUE(pods);
  const auto back = parse_pods(pods_csv(*pods), "resampled.csv", {"T4"});
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), pods->size());
  for (size_t i = 0; i < pods->size(); ++i) {
    EXPECT_EQ((*back)[i].gpus, (*pods)[i].gpus);
    EXPECT_EQ((*back)[i].gpu_milli, (*pods)[i].gpu_milli);
    EXPECT_EQ((*back)[i].cpu_milli, (*pods)[i].cpu_milli);
    EXPECT_EQ((*back)[i].memory_mib, (*pods)[i].memory_mib);
    EXPECT_EQ((*back)[i].models, (*pods)[i].models);
  }
}

}  // namespace
}  // namespace allot::sim
