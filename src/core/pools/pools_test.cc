// Node pools in the core: settings that are refused change nothing; the autoscaler's plan grows a
// pool for queued work that fits no node, up to its maximum, keeps its minimum, gives up on nodes
// that do not join in time, and takes away only nodes that run nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/pools/autoscale.h"
#include "core/pools/burst_pool.h"
#include "core/pools/pools.h"
#include "core/test_core.h"

namespace allot {
namespace {

const std::string kPool = "pol_0000000000000001";

using Kind = ScaleDecision::Kind;

class PoolsTest : public CoreTest {
 protected:
  void SetUp() override {
    ok(CreateTenant{"ten_00000000000000ff", "operator", true});
    ok(CreateTenant{kTenantA, "alpha"});
    ok(CreateProject{kProjectA, kTenantA, "one"});
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
    for (const Command& c : free_prices("elsewhere", kT0 - 1)) ok(c, kT0 - 1);
    for (const Command& c : free_prices("us", kT0 - 1)) ok(c, kT0 - 1);
  }

  static Pool burst() { return burst_pool(kPool, 10'000); }

  std::string launch(int gpus, const std::string& region = "") {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    ok(CreateInstance{.id = id,
                      .tenant_id = kTenantA,
                      .project_id = kProjectA,
                      .user_id = "usr_1",
                      .spec = {.gpus = gpus,
                               .cpu_milli = 1'000,
                               .memory_mib = 1'024,
                               .region = region,
                               .command = {"true"}}});
    return id;
  }

  // Launches `count` pool nodes as the autoscaler would; returns their tokens.
  std::vector<std::string> scale_up(int count, TimeMs at = kT0) {
    ScaleUpPool command{.pool_id = kPool, .reason = "test"};
    std::vector<std::string> tokens;
    for (int i = 0; i < count; ++i) {
      ++next_;
      const std::string token = fmt::format("{:064x}", next_);
      command.launches.push_back({.pool_node_id = fmt::format("pnd_{:016x}", next_),
                                  .name = fmt::format("burst-{}", next_),
                                  .join_token_id = fmt::format("jtk_{:016x}", next_),
                                  .token_hash = token});
      tokens.push_back(token);
    }
    ok(command, at);
    return tokens;
  }

  // Joins a node of the pool's shape with a pool token; returns the node id.
  std::string join(const std::string& token_hash, TimeMs at) {
    const std::string id = fmt::format("nod_{:016x}", ++next_);
    JoinNode join = eight_gpu_join(id, fmt::format("burst-node-{}", next_), "elsewhere",
                                   "H100-80GB", token_hash);
    join.gpus.resize(2);
    join.cpu_milli = 16'000;
    join.memory_mib = 131'072;
    ok(join, at);
    ok(NodeHeartbeat{.node_id = id}, at);
    return id;
  }

  std::vector<ScaleDecision> plan(TimeMs at) { return plan_scaling(core.state(), at, {}); }

  const PoolNode& pool_node_of(const std::string& node_id) {
    for (const auto& [id, pn] : core.state().pool_nodes) {
      if (pn.node_id == node_id) return pn;
    }
    static const PoolNode kNone;
    return kNone;
  }

  int next_ = 0;
};

TEST_F(PoolsTest, BadSettingsAreRefusedAndChangeNothing) {
  expect_refused<Pool>(
      burst(),
      {
          {"min above max", [](Pool& p) { p.min_nodes = 3; }},
          {"negative max", [](Pool& p) { p.max_nodes = -1; }},
          {"too many nodes", [](Pool& p) { p.max_nodes = 1'001; }, ErrorCode::kLimitExceeded},
          {"unknown model", [](Pool& p) { p.gpu_model = "Z9000"; }},
          {"no GPUs", [](Pool& p) { p.gpus_per_node = 0; }},
          {"zero boot timeout", [](Pool& p) { p.boot_timeout_ms = 0; }},
          {"bad name", [](Pool& p) { p.name = "has space"; }},
          {"command provider without scripts",
           [](Pool& p) { p.provider = PoolProvider::kCommand; }},
          {"scripts for the local provider", [](Pool& p) { p.create_command = "true"; }},
      },
      [](Pool pool) { return CreatePool{.pool = std::move(pool)}; });
  ok(CreatePool{.pool = burst()});
  Pool again = burst();
  again.id = "pol_0000000000000002";
  EXPECT_EQ(refused(CreatePool{.pool = again}), ErrorCode::kAlreadyExists);
  EXPECT_EQ(refused(UpdatePool{.id = kPool, .min_nodes = 5}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(UpdatePool{.id = "pol_00000000000000ee", .max_nodes = 5}),
            ErrorCode::kNotFound);
}

TEST_F(PoolsTest, QueuedWorkThatFitsNoNodeGrowsThePoolUpToItsMaximum) {
  ok(CreatePool{.pool = burst()});
  EXPECT_TRUE(plan(kT0).empty());  // Nothing waits, the minimum is 0.
  launch(2);
  launch(2);
  launch(2);
  launch(4);  // Larger than any node of the pool: no pool can take it.
  auto steps = plan(kT0);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kLaunch);
  EXPECT_EQ(steps[0].count, 2);  // Three would be needed; the maximum is two.
  const auto tokens = scale_up(2);
  EXPECT_EQ(live_pool_nodes(core.state(), kPool), 2);
  EXPECT_TRUE(plan(kT0 + 20'000).empty());  // Booting nodes are the room for what waits.
  // A third node would pass the maximum even if asked for directly.
  ScaleUpPool over{.pool_id = kPool,
                   .launches = {{.pool_node_id = "pnd_00000000000000ff",
                                 .name = "burst-x",
                                 .join_token_id = "jtk_00000000000000ff",
                                 .token_hash = std::string(64, 'e')}}};
  EXPECT_EQ(refused(over), ErrorCode::kConflict);
  // A node joins with its token: it takes the pool's region and label, and the work runs there.
  const std::string node = join(tokens[0], kT0 + 30'000);
  EXPECT_EQ(core.state().node(node)->region, "eu");
  EXPECT_EQ(core.state().node(node)->labels.at("pool"), "burst");
  EXPECT_EQ(pool_node_of(node).state, PoolNodeState::kReady);
  EXPECT_NE(core.state().join_tokens.at(pool_node_of(node).join_token_id).revoked_at_ms, 0);
  EXPECT_EQ(core.state().node(node)->gpus[0].used_milli, 1'000);
}

TEST_F(PoolsTest, AMinimumIsKeptAndWorkForAnotherRegionDoesNotGrowThePool) {
  Pool pool = burst();
  pool.min_nodes = 1;
  ok(CreatePool{.pool = pool});
  launch(1, "us");
  auto steps = plan(kT0);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].count, 1);
  EXPECT_EQ(steps[0].reason, "below the minimum of 1 nodes");
}

TEST_F(PoolsTest, APoolGrowsOnlyForWorkItsNodesCouldRunAtAPriceTheWorkAccepts) {
  Pool pool = burst();
  pool.region = "north";  // No price there yet: its nodes could run nothing charged.
  ok(CreatePool{.pool = pool});
  launch(1);
  EXPECT_TRUE(plan(kT0).empty());
  ok(SetPrice{{.key = {.model = "H100-80GB", .region = "north"}, .gpu_hour_micros = 3'000'000}});
  // Work that will not pay that much, or may not run in north, still does not grow it.
  const std::string capped = fmt::format("ins_{:016x}", ++next_);
  ok(CreateInstance{.id = capped,
                    .tenant_id = kTenantA,
                    .project_id = kProjectA,
                    .user_id = "usr_1",
                    .spec = {.gpus = 2, .command = {"true"}, .max_price_micros = 2'000'000}});
  const std::string elsewhere = fmt::format("ins_{:016x}", ++next_);
  ok(CreateInstance{.id = elsewhere,
                    .tenant_id = kTenantA,
                    .project_id = kProjectA,
                    .user_id = "usr_1",
                    .spec = {.gpus = 2, .command = {"true"}, .regions = {"eu"}}});
  ok(Tick{}, kT0 + 1);
  const auto steps = plan(kT0 + 1);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kLaunch);
  EXPECT_EQ(steps[0].count, 1);  // For the 1-GPU work alone.
}

TEST_F(PoolsTest, TheForecastGrowsAPoolAheadOfDemandAndKeepsThoseNodesWhileIdle) {
  ok(CreatePool{.pool = burst()});
  ScaleOptions options{.forecast_nodes = {{kPool, 5}}};
  // Nothing is queued, yet the forecast wants nodes: the pool grows to them, within its maximum.
  auto steps = plan_scaling(core.state(), kT0, options);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kLaunch);
  EXPECT_EQ(steps[0].count, 2);
  EXPECT_EQ(steps[0].reason, "the forecast wants 2 nodes ahead of demand");
  const auto tokens = scale_up(2);
  join(tokens[0], kT0 + 1'000);
  join(tokens[1], kT0 + 1'000);
  // Idle past the timeout, the nodes stay while the forecast wants them, and go when it does not.
  const TimeMs later = kT0 + 200'000;
  EXPECT_TRUE(plan_scaling(core.state(), later, options).empty());
  options.forecast_nodes[kPool] = 1;
  steps = plan_scaling(core.state(), later, options);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kRetire);
  EXPECT_EQ(plan(later).size(), 2U);
}

TEST_F(PoolsTest, CooldownHoldsTheNextScaleUp) {
  ok(CreatePool{.pool = burst()});
  launch(2);
  scale_up(1);
  launch(2);
  launch(2);
  EXPECT_TRUE(plan(kT0 + 9'999).empty());
  auto steps = plan(kT0 + 10'000);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].count, 1);  // One more, to the maximum of two.
}

TEST_F(PoolsTest, ANodeThatDoesNotJoinInTimeFailsIsCountedAndItsTokenIsSpent) {
  ok(CreatePool{.pool = burst()});
  launch(2);
  const auto tokens = scale_up(1);
  EXPECT_TRUE(plan(kT0 + 59'999).empty());
  auto steps = plan(kT0 + 60'000);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].kind, Kind::kBootTimeout);
  ok(RecordPoolNode{.id = steps[0].pool_node_id,
                    .outcome = PoolNodeOutcome::kBootTimedOut,
                    .detail = steps[0].reason},
     kT0 + 60'000);
  EXPECT_EQ(core.state().pool(kPool)->boot_failures, 1);
  EXPECT_EQ(core.state().pool_node(steps[0].pool_node_id)->state, PoolNodeState::kFailed);
  EXPECT_EQ(live_pool_nodes(core.state(), kPool), 0);
  // The token no longer lets anyone in.
  JoinNode late = eight_gpu_join("nod_00000000000000aa", "late", "eu", "H100-80GB", tokens[0]);
  EXPECT_EQ(refused(late, kT0 + 61'000), ErrorCode::kUnauthenticated);
  // And the work that still waits asks for a new node.
  steps = plan(kT0 + 70'000);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kLaunch);
}

TEST_F(PoolsTest, OnlyNodesIdleForTheTimeoutGoAndNeverOneThatRunsWork) {
  ok(CreatePool{.pool = burst()});
  const std::string job = launch(2);
  const auto tokens = scale_up(2);
  const std::string busy = join(tokens[0], kT0 + 1'000);
  const std::string idle = join(tokens[1], kT0 + 1'000);
  ASSERT_EQ(core.state().instance(job)->node_id, busy);
  // The idle node goes after its timeout; the busy one stays however long it runs.
  EXPECT_TRUE(plan(kT0 + 120'999).empty());
  auto steps = plan(kT0 + 121'000);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kRetire);
  EXPECT_EQ(steps[0].pool_node_id, pool_node_of(idle).id);
  EXPECT_EQ(refused(RetirePoolNode{.id = pool_node_of(busy).id}), ErrorCode::kConflict);
  ok(RetirePoolNode{.id = steps[0].pool_node_id, .reason = steps[0].reason}, kT0 + 121'000);
  EXPECT_EQ(core.state().node(idle)->admin, NodeAdmin::kCordoned);
  ok(
      RecordPoolNode{
          .id = steps[0].pool_node_id, .outcome = PoolNodeOutcome::kDeleteFailed, .detail = "boom"},
      kT0 + 122'000);
  EXPECT_EQ(core.state().pool(kPool)->delete_failures, 1);
  steps = plan(kT0 + 152'000);  // Tried again after 30 s.
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kDelete);
  ok(RecordPoolNode{.id = steps[0].pool_node_id, .outcome = PoolNodeOutcome::kDeleted},
     kT0 + 153'000);
  EXPECT_TRUE(core.state().node(idle)->lost);
  EXPECT_EQ(live_pool_nodes(core.state(), kPool), 1);
  EXPECT_EQ(refused(DeletePool{.id = kPool}), ErrorCode::kConflict);  // One node is left.
  // The job ends; its node goes once it has been idle for the timeout.
  ok(NodeHeartbeat{.node_id = busy,
                   .workloads = {{.instance_id = job,
                                  .state = WorkloadReportState::kExited,
                                  .exit_code = 0}}},
     kT0 + 200'000);
  EXPECT_TRUE(plan(kT0 + 319'999).empty());
  steps = plan(kT0 + 320'000);
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].kind, Kind::kRetire);
}

TEST_F(PoolsTest, WorkWaitingForMoneyOrAQuotaDoesNotGrowAPool) {
  Instance waiting{.id = "ins_1", .state = InstanceState::kQueued, .reason = "waits: funds"};
  EXPECT_FALSE(waits_for_room(waiting));
  waiting.reason = "no node has room";
  EXPECT_TRUE(waits_for_room(waiting));
}

}  // namespace
}  // namespace allot
