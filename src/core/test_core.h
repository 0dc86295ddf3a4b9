// What the core's tests share: one start time, the ids most of them use, and a base fixture whose
// ok() applies a command that must be accepted and whose refused() applies one that must be
// refused and checks that the refusal changed nothing at all.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/cluster/test_nodes.h"
#include "core/core.h"
#include "core/kernel/state_diff.h"

namespace allot {

// 2027-01-15T08:00:00Z: mid-month, so that the month's end is far and its start is behind.
inline constexpr TimeMs kT0 = 1'800'000'000'000;
inline constexpr int64_t kUnit = 1'000'000;  // One currency unit in micros.
inline const std::string kToken = std::string(64, 'a');
// Two tenants: alpha with projects one and two, beta with main (CoreTest::two_tenants).
inline const std::string kTenantA = "ten_000000000000000a";
inline const std::string kTenantB = "ten_000000000000000b";
inline const std::string kProjectA = "prj_000000000000000a";
inline const std::string kProjectA2 = "prj_00000000000000a2";
inline const std::string kProjectB = "prj_000000000000000b";
// One tenant and project (one_node_cloud), and nodes by number.
inline const std::string kTenant1 = "ten_0000000000000001";
inline const std::string kProject1 = "prj_0000000000000001";
inline const std::string kNode1 = "nod_0000000000000001";
inline const std::string kNode2 = "nod_0000000000000002";
inline const std::string kNode3 = "nod_0000000000000003";
inline const std::string kNode4 = "nod_0000000000000004";

class CoreTest : public ::testing::Test {
 protected:
  explicit CoreTest(CoreOptions options = {}) : core(options) {}

  Rows ok(const Command& command, TimeMs at = kT0) {
    auto rows = core.apply(command, at);
    EXPECT_TRUE(rows) << rows.error().message << " at " << at;
    return rows ? std::move(*rows) : Rows{};
  }

  ErrorCode refused(const Command& command, TimeMs at = kT0) {
    const State before = core.state();
    auto rows = core.apply(command, at);
    EXPECT_FALSE(rows) << "accepted";
    if (rows) return ErrorCode::kInternal;
    if (auto changed = kernel::first_difference(before, core.state())) {
      ADD_FAILURE() << "the refusal changed " << *changed;
    }
    return rows.error().code;
  }

  // Creates an instance of `tenant` in `project` (by default its first project of two_tenants()),
  // with the members a gang's spec asks for; returns its id.
  std::string launch(const std::string& tenant, InstanceSpec spec, TimeMs at = kT0,
                     const std::string& project = "") {
    const std::string id = next_id();
    if (spec.command.empty()) spec.command = {"true"};
    std::vector<std::string> members;
    for (int rank = 1; rank < spec.nodes; ++rank) members.push_back(next_id());
    const std::string p = !project.empty() ? project : tenant == kTenantA ? kProjectA : kProjectB;
    ok(CreateInstance{id, tenant, p, "usr_1", spec, members}, at);
    return id;
  }

  std::string next_id() { return fmt::format("ins_{:016x}", ++next_instance_); }
  const Instance& instance(const std::string& id) const { return *core.state().instance(id); }

  // A change that makes a valid object invalid, and the code of the refusal it meets.
  template <typename T>
  struct BadChange {
    const char* what;
    void (*change)(T&);
    ErrorCode code = ErrorCode::kInvalidArgument;
  };

  // Each change, made to a copy of `valid`, makes a command (`command_of`) that is refused with
  // the change's code and changes nothing.
  template <typename T, typename CommandOf>
  void expect_refused(const T& valid, std::initializer_list<BadChange<T>> changes,
                      CommandOf command_of) {
    for (const BadChange<T>& c : changes) {
      T bad = valid;
      c.change(bad);
      EXPECT_EQ(refused(command_of(std::move(bad))), c.code) << c.what;
    }
  }

  // Tenants alpha and beta, their projects, and a join token (kToken) for every node.
  void two_tenants() {
    ok(CreateTenant{kTenantA, "alpha"});
    ok(CreateTenant{kTenantB, "beta"});
    ok(CreateProject{kProjectA, kTenantA, "one"});
    ok(CreateProject{kProjectA2, kTenantA, "two"});
    ok(CreateProject{kProjectB, kTenantB, "main"});
    ok(CreateJoinToken{"jtk_0000000000000001", "all", kToken, 0});
  }

  // A heartbeat of `node` as an agent that runs all it is given sends it: placed work runs, work
  // told to stop has exited. Then the timer, at the same time.
  void beat_and_tick(const std::string& node, TimeMs at) {
    NodeHeartbeat beat{.node_id = node};
    for (const auto& [id, i] : core.state().instances) {
      if (is_final(i.state) || i.state == InstanceState::kQueued || i.node_id != node) continue;
      beat.workloads.push_back({.instance_id = id,
                                .state = i.stop_requested ? WorkloadReportState::kExited
                                                          : WorkloadReportState::kRunning});
    }
    ok(beat, at);
    ok(Tick{}, at);
  }

  Core core;
  int next_instance_ = 0;  // For next_id().
};

}  // namespace allot
