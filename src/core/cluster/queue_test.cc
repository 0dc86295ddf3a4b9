// The queue as streams: the order a pass tries queued work in, and the rules holding back a whole
// stream at once.
#include <algorithm>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/cluster/cluster.h"
#include "core/pools/autoscale.h"
#include "core/test_core.h"

namespace allot {
namespace {

class QueueTest : public CoreTest {
 protected:
  explicit QueueTest(CoreOptions options = {.heartbeat_timeout_ms = 60'000}) : CoreTest(options) {}

  void SetUp() override {
    two_tenants();
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
  }

  void join_full_nodes() {
    for (const std::string& id : {kNode1, kNode2}) {
      ok(eight_gpu_join(id, id == kNode1 ? "a" : "b", "eu", "H100-80GB", kToken));
      ok(NodeHeartbeat{.node_id = id}, kT0);
      // Tenant alpha fills the node, so its share of the cluster is all of it.
      EXPECT_EQ(instance(launch(kTenantA, {.gpus = 8})).state, InstanceState::kScheduled);
    }
  }

  std::vector<std::string> order() {
    const Draft draft(core.state());
    return queue_order(draft, core.scheduler(), 100'000);
  }
};

TEST_F(QueueTest, OnDemandFirstThenTheSmallerShareThenTheOlderWhateverTheStream) {
  join_full_nodes();
  const std::string a1 = launch(kTenantA, {.gpus = 2}, kT0 + 1);
  const std::string b_spot =
      launch(kTenantB, {.gpus = 1, .price_class = PriceClass::kSpot}, kT0 + 2);
  const std::string b1 = launch(kTenantB, {.gpus = 2}, kT0 + 3);
  const std::string a2 = launch(kTenantA, {.gpus = 1}, kT0 + 4);
  const std::string a_spot =
      launch(kTenantA, {.gpus = 1, .price_class = PriceClass::kSpot}, kT0 + 5);
  const std::string gang = launch(kTenantB, {.gpus = 1, .nodes = 2}, kT0 + 6);
  const std::string gang_member = fmt::format("ins_{:016x}", next_instance_);
  const std::string b2 = launch(kTenantB, {.gpus = 2}, kT0 + 7);
  // Beta holds nothing, alpha the whole cluster: beta's on-demand work goes first, oldest first
  // across its streams, a gang's members together; spot work last, in the same order.
  EXPECT_EQ(order(), (std::vector<std::string>{b1, gang, gang_member, b2, a1, a2, b_spot, a_spot}));
}

TEST_F(QueueTest, MergedStreamsGiveTheOrderOfASortOfTheWholeQueue) {
  // No nodes: everything waits. Both tenants hold nothing, so the order is priority, then arrival,
  // then id, across many streams of several shapes, tenants and projects.
  std::mt19937 random(7);
  std::vector<std::tuple<int, TimeMs, std::string>> expected;
  TimeMs at = kT0;
  for (int i = 0; i < 300; ++i) {
    at += static_cast<TimeMs>(random() % 3);  // Often the same millisecond: the id decides.
    const bool spot = random() % 4 == 0;
    const int pick = static_cast<int>(random() % 3);
    const std::string tenant = pick == 2 ? kTenantB : kTenantA;
    const std::string project = pick == 0 ? kProjectA : pick == 1 ? kProjectA2 : kProjectB;
    InstanceSpec spec{.gpus = 1 + static_cast<int>(random() % 3),
                      .price_class = spot ? PriceClass::kSpot : PriceClass::kOnDemand};
    const std::string id = launch(tenant, spec, at, project);
    expected.emplace_back(spot ? 1 : 0, at, id);
  }
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> ids;
  ids.reserve(expected.size());
  for (const auto& [priority, created, id] : expected) ids.push_back(id);
  EXPECT_EQ(order(), ids);
  EXPECT_GT(core.state().queue_streams.size(), 10u);
}

TEST_F(QueueTest, ARuleThatHoldsBackAStreamTellsEachOfItsInstancesWhy) {
  join_full_nodes();
  ok(StopInstance{"ins_0000000000000001"}, kT0 + 1);  // Scheduled, not started: 8 GPUs free.
  ok(SetQuota{.id = "quo_0000000000000001", .tenant_id = kTenantB, .gpu_milli = 1'000});
  const std::string first = launch(kTenantB, {.gpus = 1}, kT0 + 2);
  EXPECT_EQ(instance(first).state, InstanceState::kScheduled);
  std::vector<std::string> waiting;
  waiting.reserve(5);
  for (int i = 0; i < 5; ++i) waiting.push_back(launch(kTenantB, {.gpus = 1}, kT0 + 3 + i));
  ok(Tick{}, kT0 + 10);
  for (const std::string& id : waiting) {
    EXPECT_EQ(instance(id).state, InstanceState::kQueued);
    EXPECT_NE(instance(id).reason.find("holds 1 of its 1 GPUs"), std::string::npos)
        << instance(id).reason;
    // Held back by the rules, not by room: no pool grows for it.
    EXPECT_FALSE(waits_for_room(instance(id)));
  }
  // A raised quota lets two more start at the next pass; the rest learn the new reason.
  ok(SetQuota{.id = "quo_0000000000000002", .tenant_id = kTenantB, .gpu_milli = 3'000}, kT0 + 11);
  ok(Tick{}, kT0 + 12);
  EXPECT_EQ(instance(waiting[0]).state, InstanceState::kScheduled);
  EXPECT_EQ(instance(waiting[1]).state, InstanceState::kScheduled);
  for (size_t i = 2; i < waiting.size(); ++i) {
    EXPECT_EQ(instance(waiting[i]).state, InstanceState::kQueued);
    EXPECT_NE(instance(waiting[i]).reason.find("holds 3 of its 3 GPUs"), std::string::npos)
        << instance(waiting[i]).reason;
  }
  // Another tenant's work is not held up behind the stream.
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 1}, kT0 + 13)).state, InstanceState::kScheduled);
}

TEST_F(QueueTest, AStreamThatFindsNoRoomLeavesTheBackfillToTheWorkBehindIt) {
  join_full_nodes();
  ok(StopInstance{"ins_0000000000000001"}, kT0 + 1);  // Scheduled, not started: 8 GPUs free.
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 1}, kT0 + 2)).state, InstanceState::kScheduled);
  // 150 whole nodes asked for, more than a pass backfills past a blocked head (100), where no
  // node has 8 GPUs free: none fits, and each would find the same.
  std::vector<std::string> big;
  big.reserve(150);
  for (int i = 0; i < 150; ++i) big.push_back(launch(kTenantA, {.gpus = 8}, kT0 + 3));
  // Younger, of the same tenant and share, so behind all of them in the order: it fits, and the
  // pass reaches it.
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 2}, kT0 + 4)).state, InstanceState::kScheduled);
  ok(Tick{}, kT0 + 5);
  for (const std::string& id : big) {
    EXPECT_EQ(instance(id).state, InstanceState::kQueued);
    EXPECT_EQ(instance(id).reason, instance(big.front()).reason);
  }
  EXPECT_FALSE(instance(big.back()).reason.empty());
  EXPECT_TRUE(waits_for_room(instance(big.back())));
}

class ActiveLimitTest : public QueueTest {
 protected:
  ActiveLimitTest() : QueueTest({.heartbeat_timeout_ms = 60'000, .max_active_per_tenant = 3}) {}
};

TEST_F(ActiveLimitTest, ATenantPastItsActiveInstancesIsRefusedAndChangesNothing) {
  std::vector<std::string> queued;
  queued.reserve(3);
  for (int i = 0; i < 3; ++i) queued.push_back(launch(kTenantA, {.gpus = 1}));
  CreateInstance fourth{next_id(), kTenantA, kProjectA, "usr_1", {.gpus = 1, .command = {"true"}}};
  EXPECT_EQ(refused(fourth), ErrorCode::kLimitExceeded);
  // A gang counts each member: two more do not fit either.
  CreateInstance gang{
      next_id(),  kTenantA, kProjectA, "usr_1", {.gpus = 1, .command = {"true"}, .nodes = 2},
      {next_id()}};
  EXPECT_EQ(refused(gang), ErrorCode::kLimitExceeded);
  // Another tenant has its own count; an ended instance frees one.
  launch(kTenantB, {.gpus = 1});
  ok(StopInstance{queued.front()}, kT0 + 1);
  EXPECT_EQ(instance(launch(kTenantA, {.gpus = 1}, kT0 + 2)).state, InstanceState::kQueued);
}

}  // namespace
}  // namespace allot
