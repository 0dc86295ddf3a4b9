#include "sched/core_scheduler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/random.h"
#include "core/core.h"

namespace allot::sched {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;

// The controller's core, placing through a framework policy.
class CoreWithPolicyTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto policy = make_policy(GetParam());
    ASSERT_TRUE(policy);
    scheduler_ = std::make_unique<PolicyScheduler>(std::move(*policy));
    core_ = std::make_unique<Core>(CoreOptions{}, scheduler_.get());
    apply(CreateTenant{"ten_0000000000000001", "acme"});
    apply(CreateProject{"prj_0000000000000001", "ten_0000000000000001", "p"});
    apply(CreateJoinToken{"jtk_0000000000000001", "t", std::string(64, 'a'), 0});
    for (int n = 1; n <= 2; ++n) {
      JoinNode join{.node_id = fmt::format("nod_{:016x}", n),
                    .join_token_hash = std::string(64, 'a'),
                    .credential_hash = std::string(64, static_cast<char>('0' + n)),
                    .name = fmt::format("n{}", n),
                    .region = "eu",
                    .cpu_milli = 64'000,
                    .memory_mib = 256'000};
      for (int g = 0; g < 4; ++g) {
        join.gpus.push_back(GpuReport{.index = g,
                                      .uuid = fmt::format("n{}-{}", n, g),
                                      .model = n == 1 ? "A100-80GB" : "H100-80GB"});
      }
      apply(join);
      apply(NodeHeartbeat{.node_id = join.node_id});
    }
  }

  void apply(const Command& command) {
    auto rows = core_->apply(command, kT0);
    ASSERT_TRUE(rows) << rows.error().message;
  }

  const Instance& launch(InstanceSpec spec) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    spec.command = {"true"};
    apply(CreateInstance{id, "ten_0000000000000001", "prj_0000000000000001", "usr_1", spec});
    return *core_->state().instance(id);
  }

  std::unique_ptr<PolicyScheduler> scheduler_;
  std::unique_ptr<Core> core_;
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

INSTANTIATE_TEST_SUITE_P(Policies, CoreWithPolicyTest,
                         ::testing::Values("first-fit", "best-fit", "spread", "gpu-packing",
                                           "dot-product", "fgd", "allot"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

}  // namespace
}  // namespace allot::sched
