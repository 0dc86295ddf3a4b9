#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/random.h"
#include "core/cluster/test_nodes.h"
#include "core/core.h"
#include "core/money/metering.h"

namespace allot {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;
const std::string kToken = std::string(64, 'a');

class ClusterCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ok(CreateTenant{"ten_0000000000000001", "acme"});
    ok(CreateProject{"prj_0000000000000001", "ten_0000000000000001", "p"});
    ok(CreateJoinToken{"jtk_0000000000000001", "rack", kToken, 0});
    join("nod_0000000000000001", "a", "eu");
    join("nod_0000000000000002", "b", "us");
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
    for (const Command& c : free_prices("us", kT0 - 1)) ok(c, kT0 - 1);
  }

  void ok(const Command& command, TimeMs at = kT0) {
    auto rows = core.apply(command, at);
    ASSERT_TRUE(rows) << rows.error().message;
  }

  void join(const std::string& id, const std::string& name, const std::string& region) {
    ok(eight_gpu_join(id, name, region, "H100-80GB", kToken));
    beat(id, {});
  }

  // A local volume in region eu, and its mount at /data.
  VolumeMount local_volume_in_eu() {
    ok(CreateVolume{Volume{.id = "vol_0000000000000001",
                           .tenant_id = "ten_0000000000000001",
                           .project_id = "prj_0000000000000001",
                           .name = "data",
                           .region = "eu",
                           .backend = std::string(kVolumeLocal),
                           .size_gb = 1}});
    return VolumeMount{.volume_id = "vol_0000000000000001", .name = "data", .path = "/data"};
  }

  void beat(const std::string& node, std::vector<WorkloadReport> workloads, TimeMs at = kT0) {
    ok(NodeHeartbeat{.node_id = node, .workloads = std::move(workloads)}, at);
  }

  std::string launch(InstanceSpec spec, TimeMs at = kT0) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    if (spec.command.empty()) spec.command = {"true"};
    ok(CreateInstance{id, "ten_0000000000000001", "prj_0000000000000001", "usr_1", spec}, at);
    return id;
  }

  const Instance& instance(const std::string& id) { return *core.state().instance(id); }
  const Node& node(const std::string& id) { return *core.state().node(id); }

  Core core{CoreOptions{.heartbeat_timeout_ms = 10'000}};
  int next_ = 0;
};

TEST_F(ClusterCoreTest, WholeGpusGoToTheFirstNodeWithRoomAndItsLowestFreeGpus) {
  const std::string first = launch({.gpus = 3});
  const std::string second = launch({.gpus = 6});
  EXPECT_EQ(instance(first).node_id, "nod_0000000000000001");
  EXPECT_EQ(instance(first).gpu_indices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(instance(second).node_id, "nod_0000000000000002");
  EXPECT_EQ(instance(second).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(second).gpu_uuids.front(), "b-gpu-0");
}

TEST_F(ClusterCoreTest, ALaunchKeyNamesOneLaunchOfItsTenantForGood) {
  ok(CreateTenant{"ten_0000000000000002", "other"});
  ok(CreateProject{"prj_0000000000000002", "ten_0000000000000002", "p"});
  auto create = [&](const std::string& id, const std::string& tenant, const std::string& key) {
    return core.apply(CreateInstance{.id = id,
                                     .tenant_id = tenant,
                                     .project_id = "prj_000000000000000" + tenant.substr(19),
                                     .user_id = "usr_1",
                                     .spec = {.gpus = 1, .command = {"true"}},
                                     .launch_key = key,
                                     .launch_digest = "d"},
                      kT0);
  };
  ASSERT_TRUE(create("ins_00000000000000a1", "ten_0000000000000001", "job-7"));
  EXPECT_EQ(instance("ins_00000000000000a1").launch_key, "job-7");
  // The same key again launches nothing, whatever else differs, and says which launch has it.
  auto again = create("ins_00000000000000a2", "ten_0000000000000001", "job-7");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(again.error().message.find("ins_00000000000000a1"), std::string::npos);
  EXPECT_EQ(core.state().instance("ins_00000000000000a2"), nullptr);
  // Another tenant's keys are its own.
  ASSERT_TRUE(create("ins_00000000000000a3", "ten_0000000000000002", "job-7"));
  // The key outlives the instance.
  ok(StopInstance{"ins_00000000000000a1"});
  EXPECT_FALSE(create("ins_00000000000000a4", "ten_0000000000000001", "job-7"));
  for (const std::string& bad :
       {std::string("has space"), std::string(65, 'k'), std::string("a/b")}) {
    auto refused = create("ins_00000000000000a5", "ten_0000000000000001", bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(core.state().launch_by_key.size(), 2u);
}

TEST_F(ClusterCoreTest, FractionsShareAGpuUpToAWholeOneAndNeverAWholeGpusGpu) {
  const std::string whole = launch({.gpus = 1});
  const std::string half = launch({.gpu_milli = 500});
  const std::string other_half = launch({.gpu_milli = 500});
  const std::string more = launch({.gpu_milli = 1});
  EXPECT_EQ(instance(half).gpu_indices, std::vector<int>{1});
  EXPECT_EQ(instance(other_half).gpu_indices, std::vector<int>{1});
  EXPECT_EQ(instance(more).gpu_indices, std::vector<int>{2});
  EXPECT_EQ(node("nod_0000000000000001").gpus[0].used_milli, 1000);
  EXPECT_EQ(node("nod_0000000000000001").gpus[1].used_milli, 1000);
  EXPECT_EQ(instance(whole).gpu_indices, std::vector<int>{0});
}

TEST_F(ClusterCoreTest, NodesRunningWorkAsHostProcessesTakeOnlyTheOperatorsTenant) {
  JoinNode trusted = eight_gpu_join("nod_0000000000000003", "c", "pr", "H100-80GB", kToken);
  trusted.runtime = "process";
  ok(trusted);
  beat("nod_0000000000000003", {});
  for (const Command& c : free_prices("pr", kT0 - 1)) ok(c, kT0 - 1);
  EXPECT_EQ(node("nod_0000000000000003").runtime, "process");
  EXPECT_EQ(node("nod_0000000000000001").runtime, "container");

  const std::string tenants = launch({.gpus = 1, .region = "pr"});
  EXPECT_EQ(instance(tenants).state, InstanceState::kQueued);
  EXPECT_NE(instance(tenants).reason.find("1 of 3 ready nodes run work as host processes"),
            std::string::npos)
      << instance(tenants).reason;

  ok(CreateTenant{"ten_00000000000000ff", "operator", true});
  ok(CreateProject{"prj_00000000000000ff", "ten_00000000000000ff", "ops"});
  ok(CreateInstance{"ins_00000000000000ff", "ten_00000000000000ff", "prj_00000000000000ff", "usr_2",
                    InstanceSpec{.gpus = 1, .region = "pr", .command = {"true"}}});
  EXPECT_EQ(instance("ins_00000000000000ff").node_id, "nod_0000000000000003")
      << instance("ins_00000000000000ff").reason;
  EXPECT_EQ(instance(tenants).state, InstanceState::kQueued);
}

TEST_F(ClusterCoreTest, AnOperatorMayOpenProcessNodesToEveryTenant) {
  Core open{CoreOptions{.heartbeat_timeout_ms = 10'000, .process_nodes_for_all = true}};
  std::swap(core, open);
  SetUp();
  JoinNode trusted = eight_gpu_join("nod_0000000000000003", "c", "pr", "H100-80GB", kToken);
  trusted.runtime = "process";
  ok(trusted);
  beat("nod_0000000000000003", {});
  for (const Command& c : free_prices("pr", kT0 - 1)) ok(c, kT0 - 1);
  EXPECT_EQ(instance(launch({.gpus = 1, .region = "pr"})).node_id, "nod_0000000000000003");
}

TEST_F(ClusterCoreTest, RegionModelCpuAndMemoryLimitWhereWorkGoes) {
  EXPECT_EQ(instance(launch({.gpus = 1, .region = "us"})).node_id, "nod_0000000000000002");
  const std::string a100 = launch({.gpus = 1, .gpu_models = {"A100"}});
  EXPECT_EQ(instance(a100).state, InstanceState::kQueued);
  EXPECT_FALSE(instance(a100).reason.empty());
  EXPECT_EQ(instance(launch({.gpus = 1, .gpu_models = {"H100"}})).state, InstanceState::kScheduled);
  const std::string hungry = launch({.gpus = 1, .memory_mib = 600'000});
  EXPECT_EQ(instance(hungry).state, InstanceState::kQueued);
}

TEST_F(ClusterCoreTest, TheLifecycleFollowsTheAgentsReports) {
  const std::string ok_job = launch({.gpus = 2});
  const std::string bad_job = launch({.gpus = 2});
  const std::string missing = launch({.gpus = 2});
  const std::string stopped = launch({.gpus = 2});
  const std::string node_id = "nod_0000000000000001";
  beat(node_id, {}, kT0 + 10);
  for (const auto& id : {ok_job, bad_job, missing, stopped}) {
    EXPECT_EQ(instance(id).state, InstanceState::kStarting) << id;
  }
  using S = WorkloadReportState;
  beat(node_id,
       {{ok_job, S::kRunning},
        {bad_job, S::kRunning},
        {missing, S::kRunning},
        {stopped, S::kRunning}},
       kT0 + 20);
  EXPECT_EQ(instance(ok_job).state, InstanceState::kRunning);
  EXPECT_EQ(instance(ok_job).started_at_ms, kT0 + 20);
  ok(StopInstance{stopped}, kT0 + 25);
  EXPECT_TRUE(instance(stopped).stop_requested);
  beat(node_id, {{ok_job, S::kExited, 0}, {bad_job, S::kExited, 3}, {stopped, S::kExited, -1, 15}},
       kT0 + 30);
  EXPECT_EQ(instance(ok_job).state, InstanceState::kSucceeded);
  EXPECT_EQ(instance(ok_job).ended_at_ms, kT0 + 30);
  EXPECT_EQ(instance(bad_job).state, InstanceState::kFailed);
  EXPECT_EQ(instance(bad_job).exit_code, 3);
  EXPECT_EQ(instance(stopped).state, InstanceState::kStopped);
  EXPECT_EQ(instance(missing).state, InstanceState::kFailed);  // Running, then not reported.
  // One that ran and ended between two reports has run, for no time, at that report.
  const std::string quick = launch({.gpus = 1});
  beat(node_id, {}, kT0 + 40);
  beat(node_id, {{quick, S::kExited, 0}}, kT0 + 50);
  EXPECT_EQ(instance(quick).state, InstanceState::kSucceeded);
  EXPECT_EQ(instance(quick).started_at_ms, kT0 + 50);
  EXPECT_EQ(instance(quick).ended_at_ms, kT0 + 50);
  for (const Gpu& gpu : node(node_id).gpus) EXPECT_EQ(gpu.used_milli, 0);
}

TEST_F(ClusterCoreTest, ASilentNodeIsLostWithItsWorkEndingAtItsLastHeartbeat) {
  const std::string id = launch({.gpus = 8});
  const std::string node_id = instance(id).node_id;
  beat(node_id, {}, kT0 + 1'000);
  beat(node_id, {{id, WorkloadReportState::kRunning}}, kT0 + 2'000);
  ok(Tick{}, kT0 + 12'000);  // Exactly the timeout: not yet.
  EXPECT_EQ(node(node_id).state(), NodeState::kReady);
  beat("nod_0000000000000002", {}, kT0 + 12'001);
  ok(Tick{}, kT0 + 12'001);
  EXPECT_EQ(node(node_id).state(), NodeState::kLost);
  EXPECT_EQ(instance(id).state, InstanceState::kLost);
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 2'000);
  // Work waiting for room is placed when the node comes back.
  launch({.gpus = 8});
  const std::string waiting = launch({.gpus = 8}, kT0 + 12'002);
  EXPECT_EQ(instance(waiting).state, InstanceState::kQueued);
  beat(node_id, {}, kT0 + 13'000);
  EXPECT_EQ(node(node_id).state(), NodeState::kReady);
  EXPECT_EQ(instance(waiting).node_id, node_id);
}

TEST_F(ClusterCoreTest, AfterTheControllerWasAwayEveryNodeHasAWholeTimeoutFromItsReturn) {
  const std::string id = launch({.gpus = 8});
  const std::string node_id = instance(id).node_id;
  beat(node_id, {{id, WorkloadReportState::kRunning}}, kT0 + 2'000);
  beat("nod_0000000000000002", {}, kT0 + 2'000);
  // Away for twice the timeout; back at kT0 + 22'000.
  core.resume(kT0 + 22'000);
  ok(Tick{}, kT0 + 22'000);
  ok(Tick{}, kT0 + 32'000);  // A whole timeout after the return: not yet.
  EXPECT_EQ(node(node_id).state(), NodeState::kReady);
  EXPECT_EQ(instance(id).state, InstanceState::kRunning);
  beat(node_id, {{id, WorkloadReportState::kRunning}}, kT0 + 32'000);
  EXPECT_EQ(instance(id).state, InstanceState::kRunning);
  // A node that is truly gone is still lost, and its work ends at its real last heartbeat.
  ok(Tick{}, kT0 + 32'001);
  EXPECT_EQ(node("nod_0000000000000002").state(), NodeState::kLost);
  ok(Tick{}, kT0 + 42'001);
  EXPECT_EQ(node(node_id).state(), NodeState::kLost);
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 32'000);
}

TEST_F(ClusterCoreTest, ADeletedNodeLeavesTheFleetForGoodAndKeepsItsHistory) {
  const std::string id = launch({.gpus = 8});
  const std::string busy = instance(id).node_id;
  const std::string empty = "nod_0000000000000002";
  auto refused = core.apply(DeleteNode{busy}, kT0 + 10);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kConflict);
  EXPECT_EQ(node(busy).deleted_at_ms, 0);
  EXPECT_EQ(core.apply(DeleteNode{"nod_00000000000000ff"}, kT0).error().code, ErrorCode::kNotFound);

  ok(DeleteNode{empty}, kT0 + 10);
  EXPECT_EQ(node(empty).state(), NodeState::kDeleted);
  EXPECT_EQ(node(empty).deleted_at_ms, kT0 + 10);
  EXPECT_TRUE(node(empty).credential_hash.empty());
  EXPECT_EQ(core.state().node_for_credential(sha256_hex(empty)), nullptr);
  // It takes no work, sends no heartbeat, is never lost, and its name does not join again.
  EXPECT_EQ(instance(launch({.gpus = 8}, kT0 + 20)).state, InstanceState::kQueued);
  EXPECT_EQ(core.apply(NodeHeartbeat{.node_id = empty}, kT0 + 30).error().code,
            ErrorCode::kUnauthenticated);
  ok(Tick{}, kT0 + 60'000);
  EXPECT_EQ(node(empty).state(), NodeState::kDeleted);
  EXPECT_EQ(core.apply(eight_gpu_join("nod_00000000000000fe", "b", "us", "H100-80GB", kToken),
                       kT0 + 70'000)
                .error()
                .code,
            ErrorCode::kAlreadyExists);
  ok(DeleteNode{empty}, kT0 + 80'000);  // Again: nothing changes.
  EXPECT_EQ(node(empty).deleted_at_ms, kT0 + 10);
}

TEST_F(ClusterCoreTest, AnXidFailsTheInstanceAndRetiresTheGpu) {
  const std::string id = launch({.gpus = 1});
  const std::string node_id = instance(id).node_id;
  ok(NodeHeartbeat{.node_id = node_id, .gpus = {GpuHeartbeat{.index = 0, .xids = {79}}}}, kT0 + 5);
  EXPECT_EQ(instance(id).state, InstanceState::kFailed);
  EXPECT_NE(instance(id).reason.find("XID 79"), std::string::npos);
  EXPECT_FALSE(node(node_id).gpus[0].healthy);
  EXPECT_EQ(node(node_id).state(), NodeState::kUnhealthy);
  EXPECT_EQ(instance(launch({.gpus = 1})).gpu_indices, std::vector<int>{1});
  EXPECT_EQ(instance(launch({.gpus = 8})).node_id, "nod_0000000000000002");
}

TEST_F(ClusterCoreTest, JoiningAgainIsTheSameNodeOnlyWithTheSameGpus) {
  JoinNode again{.node_id = "nod_00000000000000ff",
                 .join_token_hash = kToken,
                 .credential_hash = std::string(64, 'c'),
                 .name = "a",
                 .region = "eu"};
  for (int i = 0; i < 8; ++i) {
    again.gpus.push_back(GpuReport{.index = i, .uuid = "a-gpu-" + std::to_string(i)});
  }
  ok(again);
  EXPECT_EQ(core.state().nodes.size(), 2u);
  EXPECT_EQ(core.state().node_for_credential(std::string(64, 'c'))->id, "nod_0000000000000001");
  EXPECT_EQ(core.state().node_for_credential(sha256_hex("nod_0000000000000001")), nullptr);
  again.gpus[0].uuid = "someone-else";
  EXPECT_EQ(core.apply(again, kT0).error().code, ErrorCode::kAlreadyExists);
  again.join_token_hash = std::string(64, 'x');
  EXPECT_EQ(core.apply(again, kT0).error().code, ErrorCode::kUnauthenticated);
  ok(RevokeJoinToken{"jtk_0000000000000001"});
  again.join_token_hash = kToken;
  again.name = "c";
  EXPECT_EQ(core.apply(again, kT0).error().code, ErrorCode::kUnauthenticated);
}

TEST_F(ClusterCoreTest, ADrainingNodeBecomesCordonedWhenItsLastInstanceEnds) {
  const std::string id = launch({.gpus = 1});
  const std::string node_id = instance(id).node_id;
  ok(SetNodeAdmin{node_id, NodeAdmin::kDraining});
  EXPECT_EQ(node(node_id).state(), NodeState::kDraining);
  EXPECT_EQ(instance(launch({.gpus = 1})).node_id, "nod_0000000000000002");
  beat(node_id, {{id, WorkloadReportState::kExited, 0}}, kT0 + 1);
  EXPECT_EQ(node(node_id).state(), NodeState::kCordoned);
}

TEST_F(ClusterCoreTest, AnInstancePastItsMaximumRunTimeIsAskedToStop) {
  const std::string id = launch({.gpus = 1, .max_run_s = 5});
  const std::string node_id = instance(id).node_id;
  beat(node_id, {{id, WorkloadReportState::kRunning}}, kT0 + 1'000);
  ok(Tick{}, kT0 + 5'999);
  EXPECT_FALSE(instance(id).stop_requested);
  ok(Tick{}, kT0 + 6'000);
  EXPECT_TRUE(instance(id).stop_requested);
  beat(node_id, {{id, WorkloadReportState::kExited, -1, 15}}, kT0 + 6'100);
  EXPECT_EQ(instance(id).state, InstanceState::kStopped);
}

TEST_F(ClusterCoreTest, ActiveInstancesAreCountedPerTenant) {
  const std::string a = launch({.gpus = 1});
  launch({.gpus = 1, .gpu_models = {"A100"}});
  EXPECT_EQ(core.state().active_by_tenant.at("ten_0000000000000001"), 2u);
  ok(StopInstance{a}, kT0 + 1);
  EXPECT_EQ(core.state().active_by_tenant.at("ten_0000000000000001"), 1u);
}

TEST_F(ClusterCoreTest, StoppingWorkThatHasNotStartedEndsItAtOnce) {
  const std::string queued = launch({.gpus = 1, .gpu_models = {"A100"}});
  ok(StopInstance{queued}, kT0 + 7);
  EXPECT_EQ(instance(queued).state, InstanceState::kStopped);
  EXPECT_EQ(instance(queued).ended_at_ms, kT0 + 7);
  EXPECT_TRUE(core.state().queue.empty());
  const std::string scheduled = launch({.gpus = 8});
  ok(StopInstance{scheduled}, kT0 + 8);
  EXPECT_EQ(instance(scheduled).state, InstanceState::kStopped);
  for (const Gpu& gpu : node(instance(scheduled).node_id).gpus) EXPECT_EQ(gpu.used_milli, 0);
}

TEST_F(ClusterCoreTest, OnDemandWorkIsPlacedBeforeSpotWorkThatCameEarlier) {
  // Fill both nodes, queue spot then on-demand, then free one node.
  const std::string a = launch({.gpus = 8});
  launch({.gpus = 8, .price_class = PriceClass::kOnDemand});
  const std::string spot = launch({.gpus = 8, .price_class = PriceClass::kSpot}, kT0 + 1);
  const std::string on_demand = launch({.gpus = 4, .price_class = PriceClass::kOnDemand}, kT0 + 2);
  EXPECT_EQ(instance(spot).state, InstanceState::kQueued);
  // The reserved instance could preempt only spot work, and there is none running.
  EXPECT_EQ(instance(on_demand).state, InstanceState::kQueued);
  ok(StopInstance{a}, kT0 + 3);  // Scheduled, not started: ends at once.
  ok(Tick{}, kT0 + 4);
  EXPECT_EQ(instance(on_demand).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(spot).state, InstanceState::kQueued);
}

TEST_F(ClusterCoreTest, BackfillPassesABlockedHeadUntilItHasWaitedTooLong) {
  const std::string x = launch({.gpus = 8});  // Fills node a.
  launch({.gpus = 7});                        // Node b: one GPU left.
  const std::string head = launch({.gpus = 4}, kT0 + 1);
  EXPECT_EQ(instance(head).state, InstanceState::kQueued);
  const std::string small = launch({.gpus = 1}, kT0 + 2);
  EXPECT_EQ(instance(small).state, InstanceState::kScheduled);  // Backfilled past the head.
  ok(StopInstance{small}, kT0 + 3);
  // Once the head has waited too long, nothing passes it any more.
  beat("nod_0000000000000001", {{x, WorkloadReportState::kRunning}}, kT0 + 300'000);
  beat("nod_0000000000000002", {}, kT0 + 300'000);
  ok(Tick{}, kT0 + 1 + 300'000);
  const std::string late = launch({.gpus = 1}, kT0 + 300'010);
  EXPECT_EQ(instance(late).state, InstanceState::kQueued);
  // Room for the head: it goes first, then the one behind it.
  // (Placed by the heartbeat that freed the room, and handed to that agent in its answer.)
  beat("nod_0000000000000001", {{x, WorkloadReportState::kExited, 0}}, kT0 + 300'020);
  EXPECT_EQ(instance(head).state, InstanceState::kStarting);
  EXPECT_EQ(instance(late).state, InstanceState::kStarting);
}

TEST_F(ClusterCoreTest, OnDemandWorkPreemptsTheSpotWorkThatLosesTheFewestGpuSeconds) {
  const std::string old_spot = launch({.gpus = 8, .price_class = PriceClass::kSpot});
  const std::string young_spot =
      launch({.gpus = 8, .price_class = PriceClass::kSpot, .requeue = true});
  beat("nod_0000000000000001", {{old_spot, WorkloadReportState::kRunning}}, kT0 + 1'000);
  beat("nod_0000000000000002", {{young_spot, WorkloadReportState::kRunning}}, kT0 + 9'000);
  const std::string urgent = launch({.gpus = 2}, kT0 + 10'000);
  EXPECT_EQ(instance(urgent).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(urgent).node_id, "nod_0000000000000002");
  EXPECT_EQ(instance(old_spot).state, InstanceState::kRunning);
  // The young one asked to be requeued: it waits again, its first run ended at preemption.
  EXPECT_EQ(instance(young_spot).state, InstanceState::kQueued);
  const auto& events = instance(young_spot).events;
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2].state, "preempted");
  EXPECT_EQ(events[events.size() - 2].at_ms, kT0 + 10'000);
  // Its first run stays on as a record of its own, metered like any run; it starts afresh.
  EXPECT_EQ(instance(young_spot).started_at_ms, 0);
  const Instance* run = nullptr;
  for (const auto& [id, i] : core.state().instances) {
    if (i.reason.find(young_spot) != std::string::npos) run = &i;
  }
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->state, InstanceState::kPreempted);
  EXPECT_EQ(run->tenant_id, instance(young_spot).tenant_id);
  const auto usage = usage_of(core.state(), *run, kT0 + 60'000);
  ASSERT_TRUE(usage.has_value());
  EXPECT_EQ(usage->end_s - usage->start_s, 1);  // From 9 s to 10 s.
  EXPECT_EQ(usage->milli, 8000);
  // Spot work never preempts.
  const std::string more_spot = launch({.gpus = 8, .price_class = PriceClass::kSpot}, kT0 + 11'000);
  EXPECT_EQ(instance(more_spot).state, InstanceState::kQueued);
  EXPECT_EQ(instance(old_spot).state, InstanceState::kRunning);
}

TEST_F(ClusterCoreTest, WorkHeldToALostNodeByItsLocalVolumesSaysSoAndRunsWhenItComesBack) {
  const VolumeMount mount = local_volume_in_eu();
  const std::string first = launch({.gpus = 8, .regions = {"eu"}, .volumes = {mount}});
  const std::string held = instance(first).node_id;
  ASSERT_EQ(held, "nod_0000000000000001");
  // The node falls silent and is lost, with the work on it.
  beat("nod_0000000000000002", {}, kT0 + 12'001);
  ok(Tick{}, kT0 + 12'001);
  ASSERT_EQ(node(held).state(), NodeState::kLost);
  const std::string next = launch({.gpus = 8, .regions = {"eu"}, .volumes = {mount}}, kT0 + 12'002);
  EXPECT_EQ(instance(next).state, InstanceState::kQueued);
  EXPECT_NE(instance(next).reason.find("on node " + held + ", which is lost"), std::string::npos)
      << instance(next).reason;
  beat(held, {}, kT0 + 13'000);
  EXPECT_EQ(instance(next).node_id, held);
  EXPECT_NE(instance(next).state, InstanceState::kQueued);
}

TEST_F(ClusterCoreTest, WorkHeldToItsLocalVolumesNodePreemptsNothingElsewhere) {
  join("nod_0000000000000003", "c", "eu");
  const VolumeMount mount = local_volume_in_eu();
  const std::string writer = launch({.gpus = 8, .regions = {"eu"}, .volumes = {mount}});
  const std::string held = instance(writer).node_id;
  EXPECT_EQ(core.state().volume("vol_0000000000000001")->node_id, held);
  const std::string spot = launch({.gpus = 8, .price_class = PriceClass::kSpot, .regions = {"eu"}});
  ASSERT_NE(instance(spot).node_id, held);
  ASSERT_EQ(node(instance(spot).node_id).region, "eu");

  // On-demand work that must run on the writer's full node waits; the spot work on the other
  // node of the region, which it could have displaced, is left alone.
  VolumeMount reading = mount;
  reading.path = "/in";
  reading.read_only = true;
  const std::string reader = launch({.gpus = 8, .regions = {"eu"}, .volumes = {reading}});
  EXPECT_EQ(instance(reader).state, InstanceState::kQueued);
  EXPECT_NE(instance(reader).reason.find("local volumes are on node " + held), std::string::npos)
      << instance(reader).reason;
  EXPECT_EQ(instance(spot).state, InstanceState::kScheduled);
  ok(StopInstance{writer}, kT0 + 1'000);
  ok(Tick{}, kT0 + 1'100);
  EXPECT_EQ(instance(reader).node_id, held);
  EXPECT_EQ(instance(reader).state, InstanceState::kScheduled);
}

TEST_F(ClusterCoreTest, AReportOfAnEarlierRunOfARequeuedInstanceChangesNothing) {
  using S = WorkloadReportState;
  const std::string steady = launch({.gpus = 8});  // The other node stays full throughout.
  const std::string older = launch({.gpus = 6, .price_class = PriceClass::kSpot});
  const std::string spot = launch({.gpus = 2, .price_class = PriceClass::kSpot, .requeue = true});
  const std::string node_id = instance(spot).node_id;
  ASSERT_EQ(instance(older).node_id, node_id);
  ASSERT_NE(instance(steady).node_id, node_id);
  beat(node_id, {{older, S::kRunning}}, kT0 + 1'000);
  beat(node_id, {{older, S::kRunning}, {spot, S::kRunning}}, kT0 + 1'500);
  EXPECT_EQ(instance(spot).run, 0);
  // 4 GPUs: both spot instances go (the requeued one first, losing least), 4 stay free, and the
  // next pass (a tick) places the requeued one there again while its first run is in its grace.
  const std::string urgent = launch({.gpus = 4}, kT0 + 2'000);
  EXPECT_EQ(instance(urgent).node_id, node_id);
  EXPECT_EQ(instance(spot).run, 1);
  EXPECT_EQ(instance(spot).last_node_id, node_id);
  ok(Tick{}, kT0 + 2'100);
  ASSERT_EQ(instance(spot).node_id, node_id) << instance(spot).reason;
  ASSERT_EQ(instance(spot).state, InstanceState::kScheduled);
  // Its first run says it runs, then that it was killed: neither is the new run's.
  beat(node_id, {{spot, S::kRunning, -1, 0, "", 0}}, kT0 + 2'200);
  beat(node_id, {{spot, S::kExited, -1, 9, "", 0}}, kT0 + 2'300);
  EXPECT_EQ(instance(spot).state, InstanceState::kStarting);  // Handed over, not yet running.
  EXPECT_EQ(instance(spot).started_at_ms, 0);
  beat(node_id, {{spot, S::kRunning, -1, 0, "", 1}}, kT0 + 2'500);
  EXPECT_EQ(instance(spot).state, InstanceState::kRunning);
  EXPECT_EQ(instance(spot).started_at_ms, kT0 + 2'500);
}

TEST_F(ClusterCoreTest, UsageRunsFromRunningToTheEndInWholeSecondsAtThePricesInForce) {
  // $2 per GPU-hour from the start, $4 from half an hour in.
  const meter::PriceKey key{.model = "H100-80GB", .region = "eu"};
  ok(SetPrice{{.key = key, .effective_ms = kT0, .gpu_hour_micros = 2'000'000}});
  ok(SetPrice{{.key = key, .effective_ms = kT0 + 1'800'000, .gpu_hour_micros = 4'000'000}});
  EXPECT_FALSE(core.apply(SetPrice{{.key = key, .effective_ms = kT0 - 1, .gpu_hour_micros = 1}},
                          kT0)
                   .has_value());  // Never backwards.
  const std::string id = launch({.gpus = 2, .region = "eu"});
  const std::string node_id = instance(id).node_id;
  beat(node_id, {}, kT0 + 500);  // Starting: free.
  EXPECT_FALSE(usage_of(core.state(), instance(id), kT0 + 500).has_value());
  beat(node_id, {{id, WorkloadReportState::kRunning}}, kT0 + 1'000);
  beat(node_id, {{id, WorkloadReportState::kExited, 0}}, kT0 + 3'601'999);
  const auto usage = usage_of(core.state(), instance(id), kT0 + 9'999'999);
  ASSERT_TRUE(usage.has_value());
  EXPECT_EQ(usage->end_s - usage->start_s, 3600);  // 1.000 s to 3601.999 s: whole seconds.
  EXPECT_EQ(usage->milli, 2000);
  // 1799 s at $2 and 1801 s at $4 for two GPUs: floor(2e6*2000*1799/3.6e6) +
  // floor(4e6*2000*1801/3.6e6).
  EXPECT_EQ(charge_of(core.state(), *usage), 1'998'888 + 4'002'222);
  // Cut anywhere, the windows add up to the whole.
  const int64_t cut = usage->start_s + 1234;
  EXPECT_EQ(*charge_between(core.state(), *usage, 0, cut) +
                *charge_between(core.state(), *usage, cut, usage->end_s + 50),
            1'998'888 + 4'002'222);
  EXPECT_EQ(charge_between(core.state(), *usage, usage->end_s, usage->end_s + 9), 0);
}

}  // namespace
}  // namespace allot
