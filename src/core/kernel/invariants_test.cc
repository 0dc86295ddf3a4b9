#include "core/kernel/invariants.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/kernel/state_diff.h"
#include "core/test_core.h"

namespace allot::kernel {
namespace {

const std::string kWork = "ins_0000000000000001";

// A real state with one instance on one GPU; each test breaks one thing behind the core's back
// (Core::restore writes a row as given) and expects the check to name it.
class InvariantsTest : public CoreTest {
 protected:
  void SetUp() override {
    for (const Command& c : one_node_cloud(kTenant1, kProject1, kNode1, kToken)) ok(c);
    for (const Command& c : free_prices("eu", kT0)) ok(c);
    ok(CreateInstance{
        kWork, kTenant1, kProject1, "usr_1", {.gpus = 1, .cpu_milli = 500, .command = {"true"}}});
    ASSERT_TRUE(check_state(core.state()).empty()) << describe(check_state(core.state()));
  }

  // Whether the state breaks the named invariant (and says so).
  static bool breaks(const State& state, std::string_view invariant) {
    const std::vector<Violation> found = check_state(state);
    return std::ranges::any_of(found, [&](const Violation& v) { return v.invariant == invariant; });
  }
  bool breaks(std::string_view invariant) const { return breaks(core.state(), invariant); }

  Node node() const { return *core.state().node(kNode1); }
  Instance work() const { return *core.state().instance(kWork); }

  InvariantsTest() : CoreTest(CoreOptions{.check_invariants = InvariantCheck::kCount}) {}
};

TEST_F(InvariantsTest, AGpusMilliMustBeTheWorkOnIt) {
  Node n = node();
  n.gpus[work().gpu_indices[0]].used_milli = 1'200;
  core.restore(std::vector<Row>{n});
  EXPECT_TRUE(breaks("gpu_milli"));
}

TEST_F(InvariantsTest, NoGpuIsHeldWholeByTwoInstances) {
  Instance twin = work();
  twin.id = "ins_0000000000000002";
  Node n = node();
  n.gpus[twin.gpu_indices[0]].used_milli = 2'000;
  n.used_cpu_milli += twin.spec.cpu_milli;
  core.restore(std::vector<Row>{twin, n});
  EXPECT_TRUE(breaks("gpu_exclusive"));
}

TEST_F(InvariantsTest, ANodesUsedCpuIsItsWorks) {
  Node n = node();
  n.used_cpu_milli = 0;
  core.restore(std::vector<Row>{n});
  EXPECT_TRUE(breaks("node_resources"));
}

TEST_F(InvariantsTest, AHoldMustBeInTheLedger) {
  Instance w = work();
  w.hold_id = "hold/nowhere";
  w.hold_micros = 5;
  core.restore(std::vector<Row>{w});
  EXPECT_TRUE(breaks("holds"));
}

TEST_F(InvariantsTest, QueuedWorkMustBeInTheQueue) {
  Instance w = work();
  w.state = InstanceState::kQueued;  // Written as queued, so the index takes it...
  core.restore(std::vector<Row>{w});
  State copy = core.state();
  copy.queue.clear();  // ...and an index that lost it is caught.
  EXPECT_TRUE(breaks(copy, "queue_index"));
}

TEST_F(InvariantsTest, EventsAreNumberedOneByOne) {
  const Row rows[] = {Event{.seq = 3}, Event{.seq = 4}};
  EXPECT_TRUE(check_command(2, rows).empty());
  const Row gap[] = {Event{.seq = 3}, Event{.seq = 5}};
  ASSERT_EQ(check_command(2, gap).size(), 1u);
  EXPECT_EQ(check_command(2, gap)[0].invariant, "events");
  const Row again[] = {Event{.seq = 2}};
  EXPECT_EQ(check_command(2, again).size(), 1u);
}

TEST_F(InvariantsTest, TimeNeverGoesBackwards) {
  EXPECT_TRUE(check_time(kT0, kT0).empty());
  ASSERT_EQ(check_time(kT0, kT0 - 1).size(), 1u);
  EXPECT_EQ(check_time(kT0, kT0 - 1)[0].invariant, "time");
}

TEST_F(InvariantsTest, TheCoreCountsWhatItFindsAfterACommand) {
  Node n = node();
  n.gpus[work().gpu_indices[0]].used_milli = 900;
  core.restore(std::vector<Row>{n});
  const int64_t checks = core.checks();
  ok(Tick{});
  EXPECT_EQ(core.checks(), checks + 1);
  ASSERT_FALSE(core.violations().empty());
  EXPECT_EQ(core.violations()[0].invariant, "gpu_milli");
}

TEST_F(InvariantsTest, TwoStatesDifferWhereAnObjectDoes) {
  const State copy = core.state();
  EXPECT_EQ(first_difference(copy, core.state()), std::nullopt);
  Instance w = work();
  w.reason = "changed";
  core.restore(std::vector<Row>{w});
  EXPECT_EQ(first_difference(copy, core.state()), "instances: " + kWork + " differs");
}

}  // namespace
}  // namespace allot::kernel
