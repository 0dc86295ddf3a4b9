// For tests of a policy through the controller's core: the core placing through the named
// framework policy, with one tenant and project, and nodes of four GPUs joined one by one.
#pragma once

#include <memory>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/cluster/test_nodes.h"
#include "core/core.h"
#include "sched/core_scheduler.h"

namespace allot::sched {

inline constexpr TimeMs kPolicyT0 = 1'800'000'000'000;

template <typename Param>
class PolicyCoreTest : public ::testing::TestWithParam<Param> {
 protected:
  void start(const std::string& policy_name) {
    auto policy = make_policy(policy_name);
    ASSERT_TRUE(policy);
    scheduler_ = std::make_unique<PolicyScheduler>(std::move(*policy));
    core_ = std::make_unique<Core>(CoreOptions{}, scheduler_.get());
    for (const Command& c : one_tenant(kTenant, kProject, std::string(64, 'a'))) apply(c);
  }

  // Node number `n` (nod_000…n) joins with four GPUs of `model` and reports once.
  void join(int n, const std::string& name, const std::string& region, const std::string& model) {
    const JoinNode join =
        gpu_join(fmt::format("nod_{:016x}", n), name, region, model, std::string(64, 'a'), 4);
    apply(join);
    apply(NodeHeartbeat{.node_id = join.node_id});
  }

  void apply(const Command& command) {
    auto rows = core_->apply(command, kPolicyT0);
    ASSERT_TRUE(rows) << rows.error().message;
  }

  const std::string kTenant = "ten_0000000000000001";
  const std::string kProject = "prj_0000000000000001";
  std::unique_ptr<PolicyScheduler> scheduler_;
  std::unique_ptr<Core> core_;
};

}  // namespace allot::sched
