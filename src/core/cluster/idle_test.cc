// Idle stop in the core: readings under the threshold for the window stop the work (or notify its
// owner once per stretch); a reading above, a missing one or a stale one starts the clock again.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/cluster/test_nodes.h"
#include "core/core.h"

namespace allot {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;
constexpr TimeMs kS = 1'000;
const std::string kTenant = "ten_0000000000000001";
const std::string kProject = "prj_0000000000000001";
const std::string kNode = "nod_0000000000000001";

// What one GPU reads in a heartbeat: a utilisation, or nothing.
using Reading = std::function<std::optional<int>(int gpu)>;

Reading all_at(int pct) {
  return [pct](int) { return std::optional<int>(pct); };
}

class IdleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ok(CreateTenant{kTenant, "acme"});
    ok(CreateProject{kProject, kTenant, "p"});
    ok(CreateJoinToken{"jtk_0000000000000001", "rack", std::string(64, 'a'), 0});
    ok(eight_gpu_join(kNode, "a", "eu", "H100-80GB", std::string(64, 'a')));
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
  }

  Result<std::vector<Row>> apply(const Command& command, TimeMs at) {
    auto rows = core.apply(command, at);
    if (rows) {
      for (const Row& row : *rows) {
        if (const auto* event = std::get_if<Event>(&row)) events.push_back(*event);
      }
    }
    return rows;
  }

  void ok(const Command& command, TimeMs at = kT0) {
    auto rows = apply(command, at);
    ASSERT_TRUE(rows) << rows.error().message;
  }

  // A heartbeat at `at` with every GPU's reading, reporting every launched instance as running
  // (or exited, for those in `exited`).
  void beat(TimeMs at, const Reading& reading, const std::vector<std::string>& exited = {}) {
    NodeHeartbeat hb{.node_id = kNode};
    for (int gpu = 0; gpu < 8; ++gpu) {
      const std::optional<int> pct = reading(gpu);
      if (!pct) continue;
      hb.gpus.push_back(GpuHeartbeat{.index = gpu, .telemetry = {.utilization_pct = *pct}});
    }
    for (const std::string& id : launched) {
      const bool gone = std::find(exited.begin(), exited.end(), id) != exited.end();
      hb.workloads.push_back(gone ? WorkloadReport{id, WorkloadReportState::kExited, -1, 15}
                                  : WorkloadReport{id, WorkloadReportState::kRunning});
    }
    ok(hb, at);
  }

  // Heartbeats every 2 s from `from` to `to`, both included.
  void beats(TimeMs from, TimeMs to, const Reading& reading) {
    for (TimeMs at = from; at <= to; at += 2 * kS) beat(at, reading);
  }

  // Launches and starts an instance at `at`; returns its id.
  std::string start(InstanceSpec spec, TimeMs at = kT0) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    spec.command = {"sleep", "inf"};
    ok(CreateInstance{id, kTenant, kProject, "usr_1", spec}, at);
    launched.push_back(id);
    beat(at, all_at(100));  // Handed to the agent, then reported running: busy so far.
    beat(at, all_at(100));
    EXPECT_EQ(instance(id).state, InstanceState::kRunning);
    return id;
  }

  const Instance& instance(const std::string& id) { return *core.state().instance(id); }

  size_t events_about(const std::string& id, const std::string& action) {
    return static_cast<size_t>(std::count_if(events.begin(), events.end(), [&](const Event& e) {
      const auto payload = nlohmann::json::parse(e.payload);
      return e.kind == "instance.idle" && payload["instance_id"] == id &&
             payload["action"] == action;
    }));
  }

  Core core{CoreOptions{.heartbeat_timeout_ms = 600'000, .heartbeat_interval_ms = 2'000}};
  std::vector<std::string> launched;
  std::vector<Event> events;
  int next_ = 0;
};

const IdlePolicy kStop10For60{.threshold_pct = 10, .window_s = 60};

TEST_F(IdleTest, UnderTheThresholdForTheWholeWindowStopsTheInstanceWithTheReason) {
  const std::string id = start({.gpus = 2, .idle = kStop10For60});
  beats(kT0 + 2 * kS, kT0 + 60 * kS, all_at(9));
  EXPECT_EQ(instance(id).idle_since_ms, kT0 + 2 * kS);
  EXPECT_FALSE(instance(id).stop_requested);  // 58 s of idle readings: not yet.
  beat(kT0 + 62 * kS, all_at(9));
  EXPECT_TRUE(instance(id).stop_requested);
  EXPECT_EQ(instance(id).events.back().message, "idle: GPUs under 10 % for 60 s");
  ASSERT_EQ(events_about(id, "stop"), 1U);
  EXPECT_EQ(events.back().tenant_id, kTenant);
  EXPECT_EQ(nlohmann::json::parse(events.back().payload)["reason"],
            "idle: GPUs under 10 % for 60 s");
  // The agent stops it like any stop; its billing ends when it is gone.
  beat(kT0 + 64 * kS, all_at(9), {id});
  EXPECT_EQ(instance(id).state, InstanceState::kStopped);
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 64 * kS);
  EXPECT_EQ(instance(id).reason, "idle: GPUs under 10 % for 60 s (killed by signal 15)");
  EXPECT_EQ(events_about(id, "stop"), 1U);
}

enum class Break { kAbove, kAtThreshold, kMissing, kUnread, kOutOfRange, kSilence };

struct BreakCase {
  const char* name;
  Break kind;
  TimeMs restart_after_ms;  // When idle readings start counting again, after the break.
};

class IdleBreakTest : public IdleTest, public ::testing::WithParamInterface<BreakCase> {};

TEST_P(IdleBreakTest, OneBusyMissingOrStaleReadingStartsTheClockAgain) {
  const BreakCase& c = GetParam();
  const std::string id = start({.gpus = 2, .idle = kStop10For60});
  beats(kT0 + 2 * kS, kT0 + 30 * kS, all_at(3));
  const TimeMs at = kT0 + 32 * kS;
  // The break touches only the instance's second GPU (index 1), once.
  auto second = [](std::optional<int> value) -> Reading {
    return [value](int gpu) { return gpu == 1 ? value : std::optional<int>(3); };
  };
  switch (c.kind) {
    case Break::kAbove:
      beat(at, second(11));
      break;
    case Break::kAtThreshold:
      beat(at, second(10));
      break;
    case Break::kMissing:
      beat(at, second(std::nullopt));
      break;
    case Break::kOutOfRange:
      beat(at, second(-1));
      break;
    case Break::kUnread: {
      NodeHeartbeat hb{.node_id = kNode};
      for (int gpu = 0; gpu < 8; ++gpu) {
        hb.gpus.push_back(GpuHeartbeat{.index = gpu, .utilization_read = gpu != 1});
      }
      hb.workloads.push_back({id, WorkloadReportState::kRunning});
      ok(hb, at);
      break;
    }
    case Break::kSilence:
      ok(Tick{}, at + 7 * kS);  // No heartbeat for 7 s (the bound is 3 x 2 s).
      EXPECT_EQ(instance(id).idle_since_ms, 0);
      break;
  }
  const TimeMs restart = at + c.restart_after_ms;
  beats(restart, restart + 58 * kS, all_at(3));
  EXPECT_EQ(instance(id).idle_since_ms, restart);
  EXPECT_FALSE(instance(id).stop_requested) << "stopped although the clock started again";
  beat(restart + 60 * kS, all_at(3));
  EXPECT_TRUE(instance(id).stop_requested);
  EXPECT_EQ(events_about(id, "stop"), 1U);
}

INSTANTIATE_TEST_SUITE_P(
    Breaks, IdleBreakTest,
    ::testing::Values(BreakCase{"OneReadingAboveTheThreshold", Break::kAbove, 2 * kS},
                      BreakCase{"AReadingAtTheThresholdIsNotUnderIt", Break::kAtThreshold, 2 * kS},
                      BreakCase{"AMissingReadingCountsAsBusy", Break::kMissing, 2 * kS},
                      BreakCase{"AnUnreadUtilisationCountsAsBusy", Break::kUnread, 2 * kS},
                      BreakCase{"AnImpossibleReadingCountsAsBusy", Break::kOutOfRange, 2 * kS},
                      BreakCase{"ASilenceLongerThanTheBoundIsStale", Break::kSilence, 9 * kS}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(IdleTest, AStaleIdleReadingNeverStopsWork) {
  const std::string id = start({.gpus = 1, .idle = kStop10For60});
  beats(kT0 + 2 * kS, kT0 + 40 * kS, all_at(0));
  // The node falls silent: its last readings (0 %) stay in place, but they are stale.
  for (TimeMs at = kT0 + 41 * kS; at <= kT0 + 300 * kS; at += kS) ok(Tick{}, at);
  EXPECT_FALSE(instance(id).stop_requested);
  EXPECT_EQ(instance(id).idle_since_ms, 0);
  EXPECT_EQ(core.state().node(kNode)->gpus[0].telemetry.utilization_pct, 0);
  // Heard again: the stretch starts afresh, it does not continue the one before the silence.
  beat(kT0 + 301 * kS, all_at(0));
  EXPECT_EQ(instance(id).idle_since_ms, kT0 + 301 * kS);
  EXPECT_FALSE(instance(id).stop_requested);
  EXPECT_EQ(events_about(id, "stop"), 0U);
}

TEST_F(IdleTest, NotifyTellsTheOwnerOncePerIdleStretchAndTheWorkRunsOn) {
  const std::string id = start({.gpus = 1, .idle = IdlePolicy{5, 60, IdleAction::kNotify}});
  beats(kT0 + 2 * kS, kT0 + 200 * kS, all_at(1));
  EXPECT_EQ(events_about(id, "notify"), 1U);
  EXPECT_TRUE(instance(id).idle_notified);
  EXPECT_EQ(instance(id).state, InstanceState::kRunning);
  EXPECT_FALSE(instance(id).stop_requested);
  EXPECT_EQ(nlohmann::json::parse(events.back().payload)["user_id"], "usr_1");
  // Busy for a moment, then idle for another window: a second notice, for the second stretch.
  beat(kT0 + 202 * kS, all_at(80));
  beats(kT0 + 204 * kS, kT0 + 262 * kS, all_at(1));
  EXPECT_EQ(events_about(id, "notify"), 1U);
  beat(kT0 + 264 * kS, all_at(1));
  EXPECT_EQ(events_about(id, "notify"), 2U);
  EXPECT_EQ(events_about(id, "stop"), 0U);
}

TEST_F(IdleTest, AnInstancesOwnPolicyOverridesItsProjects) {
  const std::string plain = start({.gpus = 1});
  const std::string own = start({.gpus = 1, .idle = IdlePolicy{10, 600, IdleAction::kNotify}});
  // Set after both launched: it applies to the one without a policy of its own.
  ok(SetProjectIdle{kProject, kStop10For60});
  beats(kT0 + 2 * kS, kT0 + 120 * kS, all_at(2));
  EXPECT_TRUE(instance(plain).stop_requested);
  EXPECT_EQ(events_about(plain, "stop"), 1U);
  EXPECT_FALSE(instance(own).stop_requested);
  EXPECT_EQ(events_about(own, "notify"), 0U);  // Its own window is 10 minutes.
  beats(kT0 + 122 * kS, kT0 + 602 * kS, all_at(2));
  EXPECT_EQ(events_about(own, "notify"), 1U);
  EXPECT_FALSE(instance(own).stop_requested);
}

TEST_F(IdleTest, ClearingTheProjectsPolicyStopsWatchingItsWork) {
  ok(SetProjectIdle{kProject, kStop10For60});
  const std::string id = start({.gpus = 1});
  beats(kT0 + 2 * kS, kT0 + 30 * kS, all_at(2));
  EXPECT_NE(instance(id).idle_since_ms, 0);
  ok(SetProjectIdle{kProject, std::nullopt});
  beats(kT0 + 32 * kS, kT0 + 300 * kS, all_at(2));
  EXPECT_EQ(instance(id).idle_since_ms, 0);
  EXPECT_FALSE(instance(id).stop_requested);
}

TEST_F(IdleTest, AFractionalInstanceIsJudgedByItsOneGpusReading) {
  const std::string id = start({.gpu_milli = 500, .idle = kStop10For60});
  ASSERT_EQ(instance(id).gpu_indices, std::vector<int>{0});
  beats(kT0 + 2 * kS, kT0 + 62 * kS, [](int gpu) { return std::optional<int>(gpu == 0 ? 4 : 95); });
  EXPECT_TRUE(instance(id).stop_requested);
}

TEST_F(IdleTest, WorkWithoutAPolicyIsNeverStopped) {
  const std::string id = start({.gpus = 1});
  beats(kT0 + 2 * kS, kT0 + 900 * kS, all_at(0));
  EXPECT_FALSE(instance(id).stop_requested);
  EXPECT_EQ(instance(id).idle_since_ms, 0);
  EXPECT_TRUE(events.empty());
}

struct BadPolicy {
  const char* name;
  IdlePolicy policy;
};

class BadIdlePolicyTest : public IdleTest, public ::testing::WithParamInterface<BadPolicy> {};

TEST_P(BadIdlePolicyTest, IsRefusedAndChangesNothing) {
  ok(SetProjectIdle{kProject, kStop10For60});
  const State before = core.state();
  auto project = apply(SetProjectIdle{kProject, GetParam().policy}, kT0 + kS);
  ASSERT_FALSE(project);
  EXPECT_EQ(project.error().code, ErrorCode::kInvalidArgument);
  InstanceSpec spec{.gpus = 1, .command = {"true"}, .idle = GetParam().policy};
  auto instance =
      apply(CreateInstance{"ins_00000000000000ff", kTenant, kProject, "usr_1", spec}, kT0 + kS);
  ASSERT_FALSE(instance);
  EXPECT_EQ(instance.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(core.state().projects, before.projects);
  EXPECT_EQ(core.state().instances, before.instances);
  EXPECT_EQ(core.state().project(kProject)->idle, kStop10For60);
}

INSTANTIATE_TEST_SUITE_P(Policies, BadIdlePolicyTest,
                         ::testing::Values(BadPolicy{"ThresholdZero", {0, 600}},
                                           BadPolicy{"ThresholdOver100", {101, 600}},
                                           BadPolicy{"NegativeThreshold", {-5, 600}},
                                           BadPolicy{"WindowUnderAMinute", {10, 59}},
                                           BadPolicy{"NoWindow", {10, 0}},
                                           BadPolicy{"WindowOverAWeek", {10, 7 * 86'400 + 1}}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(IdleTest, PoliciesForUnknownProjectsAreRefused) {
  auto unknown = apply(SetProjectIdle{"prj_00000000000000ff", kStop10For60}, kT0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

// A gang of two 8-GPU members on two nodes: it is idle only while both members are.
class GangIdleTest : public IdleTest {
 protected:
  void SetUp() override {
    IdleTest::SetUp();
    ok(eight_gpu_join(kOther, "b", "eu", "H100-80GB", std::string(64, 'a')));
  }

  // Launches the gang at kT0 and reports both members running; returns {rank 0, rank 1}.
  std::vector<std::string> start_gang(const IdlePolicy& policy) {
    const InstanceSpec spec{.gpus = 8, .command = {"sleep", "inf"}, .nodes = 2, .idle = policy};
    ok(CreateInstance{kRank0, kTenant, kProject, "usr_1", spec, {kRank1}}, kT0);
    for (int i = 0; i < 2; ++i) both(kT0, 100, 100);
    EXPECT_EQ(instance(kRank0).state, InstanceState::kRunning);
    EXPECT_EQ(instance(kRank1).state, InstanceState::kRunning);
    return {kRank0, kRank1};
  }

  // One heartbeat from each node at `at`, its GPUs reading `pct_a` and `pct_b`.
  void both(TimeMs at, int pct_a, int pct_b) {
    for (const auto& [node, pct] : {std::pair{kNode, pct_a}, std::pair{kOther, pct_b}}) {
      NodeHeartbeat hb{.node_id = node};
      for (int gpu = 0; gpu < 8; ++gpu) {
        hb.gpus.push_back(GpuHeartbeat{.index = gpu, .telemetry = {.utilization_pct = pct}});
      }
      for (const std::string& id : {kRank0, kRank1}) {
        if (instance(id).node_id == node) {
          hb.workloads.push_back(WorkloadReport{id, WorkloadReportState::kRunning});
        }
      }
      ok(hb, at);
    }
  }

  const std::string kOther = "nod_0000000000000002";
  const std::string kRank0 = "ins_00000000000000a0";
  const std::string kRank1 = "ins_00000000000000a1";
};

TEST_F(GangIdleTest, AGangWithOneBusyMemberIsNotIdle) {
  start_gang(kStop10For60);
  for (TimeMs at = kT0 + 2 * kS; at <= kT0 + 200 * kS; at += 2 * kS) both(at, 0, 50);
  EXPECT_NE(instance(kRank0).idle_since_ms, 0);  // Its own GPUs are idle...
  EXPECT_EQ(instance(kRank1).idle_since_ms, 0);  // ...but its partner's are not.
  EXPECT_FALSE(instance(kRank0).stop_requested);
  EXPECT_FALSE(instance(kRank1).stop_requested);
  EXPECT_EQ(events_about(kRank0, "stop"), 0U);
}

TEST_F(GangIdleTest, AGangIdleOnEveryMemberForTheWindowStopsWholeWithOneEvent) {
  start_gang(kStop10For60);
  // Rank 0 idles from 2 s on, rank 1 only from 40 s on: the gang's window ends at 100 s.
  for (TimeMs at = kT0 + 2 * kS; at < kT0 + 40 * kS; at += 2 * kS) both(at, 0, 50);
  for (TimeMs at = kT0 + 40 * kS; at < kT0 + 100 * kS; at += 2 * kS) both(at, 0, 0);
  EXPECT_FALSE(instance(kRank0).stop_requested);
  EXPECT_FALSE(instance(kRank1).stop_requested);
  both(kT0 + 100 * kS, 0, 0);
  EXPECT_TRUE(instance(kRank0).stop_requested);
  EXPECT_TRUE(instance(kRank1).stop_requested);
  ASSERT_EQ(events_about(kRank0, "stop"), 1U);
  EXPECT_EQ(nlohmann::json::parse(events.back().payload)["members"],
            nlohmann::json({kRank0, kRank1}));
}

TEST_F(GangIdleTest, AGangsOwnerIsNotifiedOncePerStretch) {
  start_gang(IdlePolicy{.threshold_pct = 10, .window_s = 60, .action = IdleAction::kNotify});
  for (TimeMs at = kT0 + 2 * kS; at <= kT0 + 200 * kS; at += 2 * kS) both(at, 0, 0);
  EXPECT_EQ(events_about(kRank0, "notify"), 1U);
  EXPECT_TRUE(instance(kRank0).idle_notified);
  EXPECT_TRUE(instance(kRank1).idle_notified);
  EXPECT_FALSE(instance(kRank0).stop_requested);
  // A busy reading on one member ends the stretch; the next one notifies again.
  both(kT0 + 202 * kS, 0, 90);
  for (TimeMs at = kT0 + 204 * kS; at <= kT0 + 300 * kS; at += 2 * kS) both(at, 0, 0);
  EXPECT_EQ(events_about(kRank0, "notify"), 2U);
}

TEST_F(IdleTest, TheOperatorMayAllowShorterWindows) {
  Core lenient{CoreOptions{.idle_min_window_s = 5}};
  ASSERT_TRUE(lenient.apply(CreateTenant{kTenant, "acme"}, kT0));
  ASSERT_TRUE(lenient.apply(CreateProject{kProject, kTenant, "p"}, kT0));
  EXPECT_TRUE(lenient.apply(SetProjectIdle{kProject, IdlePolicy{10, 5}}, kT0));
  EXPECT_FALSE(lenient.apply(SetProjectIdle{kProject, IdlePolicy{10, 4}}, kT0));
}

}  // namespace
}  // namespace allot
