// Quotas, reservations, fair-share weights and gangs, on the core with the built-in first-fit.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/test_core.h"

namespace allot {
namespace {

class RulesTest : public CoreTest {
 protected:
  void SetUp() override {
    two_tenants();
    // Three nodes with H100s in region eu (racks r1, r2, r1) and one with A100s in us.
    join(kNode1, "a", "eu", "r1", "H100-80GB");
    join(kNode2, "b", "eu", "r2", "H100-80GB");
    join(kNode3, "c", "eu", "r1", "H100-80GB");
    join(kNode4, "d", "us", "", "A100-80GB");
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
    for (const Command& c : free_prices("us", kT0 - 1)) ok(c, kT0 - 1);
  }

  void join(const std::string& id, const std::string& name, const std::string& region,
            const std::string& rack, const std::string& model) {
    JoinNode join = eight_gpu_join(id, name, region, model, kToken);
    if (!rack.empty()) join.labels["rack"] = rack;
    ok(join);
    ok(NodeHeartbeat{.node_id = id}, kT0);
  }

  RulesTest() : CoreTest(CoreOptions{.heartbeat_timeout_ms = 60'000}) {}
};

TEST_F(RulesTest, AQuotaHoldsWorkBackUntilTheTenantsUsageFalls) {
  ok(SetQuota{.id = "quo_0000000000000001", .tenant_id = kTenantA, .gpu_milli = 8'000});
  const std::string first = launch(kTenantA, {.gpus = 6});
  const std::string second = launch(kTenantA, {.gpus = 4});
  EXPECT_EQ(instance(first).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(second).state, InstanceState::kQueued);
  EXPECT_NE(instance(second).reason.find("quota quo_0000000000000001"), std::string::npos)
      << instance(second).reason;
  EXPECT_NE(instance(second).reason.find("holds 6 of its 8 GPUs"), std::string::npos);
  // Another tenant is neither limited nor held up behind it.
  EXPECT_EQ(instance(launch(kTenantB, {.gpus = 8})).state, InstanceState::kScheduled);
  ok(StopInstance{first}, kT0 + 1);
  EXPECT_EQ(instance(second).state, InstanceState::kScheduled);
}

TEST_F(RulesTest, ARaisedQuotaLetsWaitingWorkStartAtTheNextPass) {
  ok(SetQuota{.id = "quo_0000000000000001", .tenant_id = kTenantA, .gpu_milli = 2'000});
  const std::string waiting = launch(kTenantA, {.gpus = 1});
  const std::string more = launch(kTenantA, {.gpus = 2});
  EXPECT_EQ(instance(more).state, InstanceState::kQueued);
  ok(SetQuota{.id = "quo_00000000000000ff", .tenant_id = kTenantA, .gpu_milli = 3'000});
  EXPECT_EQ(core.state().quotas.size(), 1u);  // The same (tenant, project, model): replaced.
  ok(Tick{}, kT0 + 1);
  EXPECT_EQ(instance(waiting).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(more).state, InstanceState::kScheduled);
}

TEST_F(RulesTest, AModelQuotaOnAProjectSendsItsWorkToOtherModels) {
  ok(SetQuota{.id = "quo_0000000000000001",
              .tenant_id = kTenantA,
              .project_id = kProjectA,
              .gpu_model = "H100",
              .gpu_milli = 2'000});
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 2})).state, InstanceState::kScheduled);
  const std::string elsewhere = launch(kTenantA, {.gpus = 1});
  EXPECT_EQ(instance(elsewhere).node_id, kNode4);  // The A100s: its H100 quota is used up.
  const std::string h100 = launch(kTenantA, {.gpus = 1, .gpu_models = {"H100"}});
  EXPECT_EQ(instance(h100).state, InstanceState::kQueued);
  // The tenant's other project is not under this quota.
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 1}, kT0, kProjectA2)).node_id, kNode1);
}

TEST_F(RulesTest, WhatNoQuotaCouldEverAdmitIsRefusedAndChangesNothing) {
  ok(SetQuota{.id = "quo_0000000000000001", .tenant_id = kTenantA, .gpu_milli = 4'000});
  EXPECT_EQ(refused(CreateInstance{"ins_00000000000000aa", kTenantA, kProjectA, "usr_1",
                                   InstanceSpec{.gpus = 8, .command = {"true"}}}),
            ErrorCode::kLimitExceeded);
  EXPECT_EQ(
      refused(SetQuota{.id = "quo_0000000000000002", .tenant_id = kTenantA, .gpu_model = "Z9"}),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetQuota{.id = "quo_0000000000000002", .tenant_id = kTenantA, .gpu_milli = -1}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetQuota{.id = "quo_0000000000000002",
                             .tenant_id = kTenantA,
                             .project_id = kProjectB,
                             .gpu_milli = 1}),
            ErrorCode::kNotFound);
  ok(DeleteQuota{"quo_0000000000000001"}, kT0 + 1);
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 8})).state, InstanceState::kScheduled);
}

TEST_F(RulesTest, AReservationKeepsOthersOnDemandWorkOffButLetsSpotInUntilTheHolderNeedsIt) {
  ok(CreateReservation{.id = "rsv_0000000000000001",
                       .tenant_id = kTenantA,
                       .gpu_model = "H100-80GB",
                       .gpus = 16,
                       .starts_at_ms = kT0,
                       .ends_at_ms = kT0 + 3'600'000});
  const std::string fits = launch(kTenantB, {.gpus = 8, .gpu_models = {"H100"}});
  EXPECT_EQ(instance(fits).state, InstanceState::kScheduled);  // 24 H100s, 16 held.
  const std::string held_off = launch(kTenantB, {.gpus = 1, .gpu_models = {"H100"}});
  EXPECT_EQ(instance(held_off).state, InstanceState::kQueued);
  EXPECT_NE(instance(held_off).reason.find("reserved for other tenants"), std::string::npos)
      << instance(held_off).reason;
  const std::string spot =
      launch(kTenantB, {.gpus = 8, .gpu_models = {"H100"}, .price_class = PriceClass::kSpot});
  EXPECT_EQ(instance(spot).state, InstanceState::kScheduled);
  // The holder's reserved work takes the free half, then preempts the spot work for the rest.
  const std::string first =
      launch(kTenantA, {.gpus = 8, .price_class = PriceClass::kReserved}, kT0 + 1);
  const std::string second =
      launch(kTenantA, {.gpus = 8, .price_class = PriceClass::kReserved}, kT0 + 2);
  EXPECT_EQ(instance(first).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(second).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(spot).state, InstanceState::kPreempted);
  EXPECT_EQ(instance(held_off).state, InstanceState::kQueued);
  // Beyond its reservation, reserved work waits.
  const std::string beyond =
      launch(kTenantA, {.gpus = 1, .price_class = PriceClass::kReserved}, kT0 + 3);
  EXPECT_NE(instance(beyond).reason.find("in full use"), std::string::npos)
      << instance(beyond).reason;
}

TEST_F(RulesTest, AReservationTakesEffectInItsWindowOnly) {
  ok(CreateReservation{.id = "rsv_0000000000000001",
                       .tenant_id = kTenantA,
                       .gpu_model = "H100-80GB",
                       .gpus = 24,
                       .starts_at_ms = kT0 + 1'000,
                       .ends_at_ms = kT0 + 2'000});
  EXPECT_EQ(instance(launch(kTenantB, {.gpus = 1, .gpu_models = {"H100"}})).state,
            InstanceState::kScheduled);
  EXPECT_EQ(instance(launch(kTenantB, {.gpus = 1, .gpu_models = {"H100"}}, kT0 + 1'500)).state,
            InstanceState::kQueued);
  EXPECT_EQ(instance(launch(kTenantB, {.gpus = 1, .gpu_models = {"H100"}}, kT0 + 2'000)).state,
            InstanceState::kScheduled);
}

TEST_F(RulesTest, ReservationsBeyondTheClusterOrWithoutAWindowAreRefused) {
  CreateReservation r{.id = "rsv_0000000000000001",
                      .tenant_id = kTenantA,
                      .gpu_model = "H100-80GB",
                      .gpus = 16,
                      .starts_at_ms = kT0,
                      .ends_at_ms = kT0 + 1'000};
  ok(r);
  r.id = "rsv_0000000000000002";
  r.tenant_id = kTenantB;
  EXPECT_EQ(refused(r), ErrorCode::kConflict);  // 16 + 16 > 24 H100s.
  r.starts_at_ms = kT0 + 1'000;
  r.ends_at_ms = kT0 + 2'000;
  ok(r);  // After the first one's window: fits.
  r.id = "rsv_0000000000000003";
  r.ends_at_ms = r.starts_at_ms;
  EXPECT_EQ(refused(r), ErrorCode::kInvalidArgument);
  r.ends_at_ms = kT0 + 5'000;
  r.gpu_model = "H100-81GB";
  EXPECT_EQ(refused(r), ErrorCode::kInvalidArgument);
  // Reserved work needs a reservation of its tenant.
  EXPECT_EQ(refused(CreateInstance{"ins_00000000000000aa", kTenantB, kProjectB, "usr_1",
                                   InstanceSpec{.gpus = 1,
                                                .gpu_models = {"A100"},
                                                .price_class = PriceClass::kReserved,
                                                .command = {"true"}}}),
            ErrorCode::kInvalidArgument);
  ok(CancelReservation{"rsv_0000000000000001"});
  EXPECT_NE(core.state().reservation("rsv_0000000000000001")->cancelled_at_ms, 0);
}

TEST_F(RulesTest, AHeavierWeightPutsATenantFirstAtEqualUse) {
  launch(kTenantA, {.gpus = 8});
  launch(kTenantA, {.gpus = 8});
  const std::string b_running = launch(kTenantB, {.gpus = 8});
  launch(kTenantB, {.gpus = 8});
  const std::string a_waiting = launch(kTenantA, {.gpus = 8}, kT0 + 1);
  const std::string b_waiting = launch(kTenantB, {.gpus = 8}, kT0 + 2);
  ok(SetTenantWeight{kTenantB, 4});
  EXPECT_EQ(core.state().tenant(kTenantB)->weight, 4);
  ok(StopInstance{b_running}, kT0 + 3);
  // Equal GPUs held, but beta's share counts a quarter: its later work goes first.
  EXPECT_EQ(instance(b_waiting).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(a_waiting).state, InstanceState::kQueued);
  EXPECT_EQ(refused(SetTenantWeight{kTenantB, 0}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetTenantWeight{kTenantB, 1'001}), ErrorCode::kInvalidArgument);
}

TEST_F(RulesTest, AGangStartsOnAllItsNodesAtOnceOrNotAtAll) {
  const std::string blocker = launch(kTenantB, {.gpus = 8, .gpu_models = {"H100"}});
  const std::string gang =
      launch(kTenantA, {.gpus = 8, .gpu_models = {"H100"}, .nodes = 3}, kT0 + 1);
  const Instance& leader = instance(gang);
  ASSERT_EQ(core.state().instances.size(), 4u);
  EXPECT_EQ(leader.gang_id, gang);
  for (const auto& [id, member] : core.state().instances) {
    if (member.gang_id != gang) continue;
    EXPECT_EQ(member.state, InstanceState::kQueued) << id;
    EXPECT_NE(member.reason.find("waits for 3 nodes at once"), std::string::npos) << member.reason;
    // The blocker holds one of the three nodes: two could take a member now.
    EXPECT_NE(member.reason.find("2 nodes can take 8 GPUs of H100 now"), std::string::npos)
        << member.reason;
  }
  ok(StopInstance{blocker}, kT0 + 2);
  std::set<std::string> nodes;
  for (const auto& [id, member] : core.state().instances) {
    if (member.gang_id != gang) continue;
    EXPECT_EQ(member.state, InstanceState::kScheduled) << id;
    nodes.insert(member.node_id);
    EXPECT_EQ(member.spec.env.at("ALLOT_GANG_SIZE"), "3");
    EXPECT_EQ(member.spec.env.at("ALLOT_GANG_RANK"), std::to_string(member.gang_rank));
    EXPECT_EQ(member.spec.env.at("ALLOT_GANG_ID"), gang);
  }
  EXPECT_EQ(nodes, (std::set<std::string>{kNode1, kNode2, kNode3}));
  EXPECT_EQ(leader.spec.env.at("ALLOT_GANG_LEADER"), core.state().node(leader.node_id)->name);
  // Each member publishes its first block of ports on its node; the others are told where.
  EXPECT_EQ(leader.gang_port, 28'000);
  EXPECT_EQ(leader.spec.env.at("MASTER_PORT"), "28000");
  EXPECT_EQ(leader.spec.env.at("MASTER_ADDR"), core.state().node(leader.node_id)->name);
  EXPECT_EQ(leader.spec.env.at("ALLOT_GANG_PORTS"), "28000-28015");
  const std::string& addrs = leader.spec.env.at("ALLOT_GANG_ADDRS");
  EXPECT_EQ(std::count(addrs.begin(), addrs.end(), ','), 2) << addrs;
  EXPECT_TRUE(addrs.starts_with(core.state().node(leader.node_id)->name + ":28000")) << addrs;
}

TEST_F(RulesTest, GangMembersSharingANodePublishApartPorts) {
  for (int i = 0; i < 3; ++i) launch(kTenantA, {.gpus = 4, .nodes = 2});
  std::map<std::string, std::set<int>> ports;
  int members = 0;
  for (const auto& [id, member] : core.state().instances) {
    if (member.gang_id.empty() || member.state != InstanceState::kScheduled) continue;
    ++members;
    EXPECT_TRUE(ports[member.node_id].insert(member.gang_port).second)
        << "port " << member.gang_port << " twice on " << member.node_id;
    EXPECT_EQ(member.spec.env.at("ALLOT_GANG_PORT"), std::to_string(member.gang_port));
  }
  EXPECT_EQ(members, 6);
  // Six members of 4 GPUs on four 8-GPU nodes: a node holding two gives them the first two blocks.
  int shared = 0;
  for (const auto& [node, held] : ports) {
    if (held.size() < 2) continue;
    ++shared;
    EXPECT_EQ(held, (std::set<int>{28'000, 28'016})) << node;
  }
  EXPECT_GE(shared, 1);
}

TEST_F(RulesTest, AGangPrefersOneRackThenOneRegion) {
  const std::string gang = launch(kTenantA, {.gpus = 4, .nodes = 2});
  const Instance& rank0 = instance(gang);
  const Instance& rank1 = instance(fmt::format("ins_{:016x}", 2));
  EXPECT_EQ(rank1.gang_rank, 1);
  EXPECT_EQ(rank0.node_id, kNode1);  // Rack r1 of eu holds nodes a and c.
  EXPECT_EQ(rank1.node_id, kNode3);
  // Three nodes: no rack has three, region eu does.
  const std::string wide = launch(kTenantA, {.gpus = 4, .nodes = 3});
  for (const auto& [id, member] : core.state().instances) {
    if (member.gang_id == wide) {
      EXPECT_NE(member.node_id, kNode4) << id;
    }
  }
}

TEST_F(RulesTest, AGangMemberThatFailsEndsTheGang) {
  const std::string gang = launch(kTenantA, {.gpus = 8, .nodes = 2});
  const std::string other = fmt::format("ins_{:016x}", 2);
  using S = WorkloadReportState;
  ok(NodeHeartbeat{.node_id = instance(gang).node_id, .workloads = {{gang, S::kRunning}}}, kT0 + 1);
  ok(NodeHeartbeat{.node_id = instance(other).node_id, .workloads = {{other, S::kRunning}}},
     kT0 + 1);
  ok(NodeHeartbeat{.node_id = instance(gang).node_id, .workloads = {{gang, S::kExited, 3}}},
     kT0 + 2);
  EXPECT_EQ(instance(gang).state, InstanceState::kFailed);
  EXPECT_TRUE(instance(other).stop_requested);
  EXPECT_NE(instance(other).events.back().message.find("gang member " + gang), std::string::npos);
}

TEST_F(RulesTest, StoppingOneMemberStopsTheGangAndBadGangsAreRefused) {
  const std::string gang = launch(kTenantA, {.gpus = 8, .nodes = 2});
  ok(StopInstance{fmt::format("ins_{:016x}", 2)}, kT0 + 1);
  EXPECT_EQ(instance(gang).state, InstanceState::kStopped);
  EXPECT_EQ(instance(fmt::format("ins_{:016x}", 2)).state, InstanceState::kStopped);
  auto create = [](InstanceSpec spec, std::vector<std::string> members) {
    spec.command = {"true"};
    return CreateInstance{"ins_00000000000000aa", kTenantA, kProjectA, "usr_1", spec,
                          std::move(members)};
  };
  EXPECT_EQ(refused(create({.gpus = 1, .nodes = 2}, {})), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(create({.gpu_milli = 500, .nodes = 2}, {"ins_00000000000000ab"})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(create({.gpus = 1, .requeue = true, .nodes = 2}, {"ins_00000000000000ab"})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(create({.gpus = 1, .nodes = 65}, {})), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(create({.gpus = 1, .nodes = 2}, {"ins_00000000000000aa"})),
            ErrorCode::kAlreadyExists);
}

}  // namespace
}  // namespace allot
