#include <gtest/gtest.h>

#include "core/cluster/image_pulls.h"
#include "core/test_core.h"

namespace allot {
namespace {

const std::string kPooled = "nod_0000000000000001";
const std::string kUnpooled = "nod_0000000000000002";
const std::string kTrusted = "nod_0000000000000003";

class ImagePullTest : public CoreTest {
 protected:
  void SetUp() override {
    ok(CreateTenant{"ten_0000000000000001", "operator", true});
    ok(CreateProject{kProject1, "ten_0000000000000001", "ops"});
    ok(CreateJoinToken{"jtk_0000000000000001", "rack", kToken, 0});
    JoinNode pooled = eight_gpu_join(kPooled, "a", "eu", "H100-80GB", kToken);
    pooled.labels = {{"pool", "train"}};
    JoinNode unpooled = eight_gpu_join(kUnpooled, "b", "eu", "H100-80GB", kToken);
    JoinNode trusted = eight_gpu_join(kTrusted, "c", "eu", "H100-80GB", kToken);
    trusted.labels = {{"pool", "train"}};
    trusted.runtime = "process";
    for (const JoinNode& join : {pooled, unpooled, trusted}) {
      ok(join);
      ok(NodeHeartbeat{.node_id = join.node_id});
    }
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
  }

  const Node& node(const std::string& id) { return *core.state().node(id); }

  ImagePullTest() : CoreTest(CoreOptions{.heartbeat_timeout_ms = 10'000}) {}
};

TEST_F(ImagePullTest, APoolsContainerNodesPullAndThePullEndsWithTheirReports) {
  const int64_t generation = node(kPooled).generation;
  ok(RequestImagePull{.id = "ipl_0000000000000001",
                      .image = "registry.example:5000/team/train:1",
                      .pool = "train",
                      .tenant_id = "ten_0000000000000001"});
  const ImagePull& pull = *core.state().image_pull("ipl_0000000000000001");
  // Only the pool's container node: the process node has no image store to fill.
  ASSERT_EQ(pull.targets.size(), 1u);
  EXPECT_EQ(pull.targets[0].node_id, kPooled);
  EXPECT_GT(node(kPooled).generation, generation);  // Its agent hears of it at once.
  ASSERT_EQ(pulls_for_node(core.state(), kPooled).size(), 1u);
  EXPECT_TRUE(pulls_for_node(core.state(), kUnpooled).empty());

  // Another node's word about it changes nothing.
  ok(NodeHeartbeat{.node_id = kUnpooled,
                   .pulls = {{.pull_id = "ipl_0000000000000001", .state = PullState::kDone}}},
     kT0 + 1);
  EXPECT_FALSE(core.state().image_pull("ipl_0000000000000001")->finished());

  ok(NodeHeartbeat{.node_id = kPooled,
                   .pulls = {{.pull_id = "ipl_0000000000000001", .state = PullState::kPulling}}},
     kT0 + 2);
  EXPECT_EQ(core.state().image_pull("ipl_0000000000000001")->targets[0].state, PullState::kPulling);
  ok(NodeHeartbeat{.node_id = kPooled,
                   .pulls = {{.pull_id = "ipl_0000000000000001",
                              .state = PullState::kFailed,
                              .message = "manifest unknown"}}},
     kT0 + 3);
  const PullTarget& ended = core.state().image_pull("ipl_0000000000000001")->targets[0];
  EXPECT_EQ(ended.state, PullState::kFailed);
  EXPECT_EQ(ended.message, "manifest unknown");
  EXPECT_EQ(ended.ended_at_ms, kT0 + 3);
  EXPECT_TRUE(core.state().image_pull("ipl_0000000000000001")->finished());
  EXPECT_TRUE(pulls_for_node(core.state(), kPooled).empty());

  // A late report does not reopen what has ended.
  ok(NodeHeartbeat{.node_id = kPooled,
                   .pulls = {{.pull_id = "ipl_0000000000000001", .state = PullState::kDone}}},
     kT0 + 4);
  EXPECT_EQ(core.state().image_pull("ipl_0000000000000001")->targets[0].state, PullState::kFailed);

  // Without a pool: every container node.
  ok(RequestImagePull{.id = "ipl_0000000000000002", .image = "busybox"});
  EXPECT_EQ(core.state().image_pull("ipl_0000000000000002")->targets.size(), 2u);
  EXPECT_EQ(core.state().image_pull("ipl_0000000000000002")->image,
            "docker.io/library/busybox:latest");
}

TEST_F(ImagePullTest, ABadPullIsRefusedAndChangesNothing) {
  EXPECT_EQ(refused(RequestImagePull{.id = "ipl_0000000000000001", .image = "Bad Image!"}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(RequestImagePull{.id = "ipl_0000000000000001", .image = "localhost/mine:1"}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      refused(RequestImagePull{.id = "ipl_0000000000000001", .image = "busybox", .pool = "none"}),
      ErrorCode::kConflict);
  EXPECT_EQ(refused(RequestImagePull{.id = "bad", .image = "busybox"}), ErrorCode::kInvalidId);
  EXPECT_TRUE(core.state().image_pulls.empty());
}

TEST_F(ImagePullTest, ANodeWithoutItsGpuSpecHasItsGpusOutOfServiceUntilItHasOne) {
  // One GPU already out for an XID stays out when the problem goes.
  ok(NodeHeartbeat{.node_id = kUnpooled, .gpus = {GpuHeartbeat{.index = 0, .xids = {79}}}});
  const std::string why = "no CDI spec of kind nvidia.com/gpu";
  ok(NodeHeartbeat{.node_id = kUnpooled, .gpu_problem = why}, kT0 + 1);
  EXPECT_EQ(node(kUnpooled).state(), NodeState::kUnhealthy);
  EXPECT_EQ(node(kUnpooled).gpus[3].health_reason, why);
  ok(CreateInstance{"ins_0000000000000001", "ten_0000000000000001", kProject1, "usr_1",
                    InstanceSpec{.gpus = 8, .command = {"true"}}},
     kT0 + 2);
  EXPECT_NE(core.state().instance("ins_0000000000000001")->node_id, kUnpooled);

  ok(NodeHeartbeat{.node_id = kUnpooled}, kT0 + 3);
  EXPECT_TRUE(node(kUnpooled).gpus[3].healthy);
  EXPECT_FALSE(node(kUnpooled).gpus[0].healthy);
  EXPECT_EQ(node(kUnpooled).gpus[0].health_reason, "critical XID 79");

  // Said at join, it holds from the start, and goes with the first report that no longer says it.
  JoinNode without = eight_gpu_join("nod_0000000000000004", "d", "eu", "H100-80GB", kToken);
  without.gpu_problem = why;
  ok(without, kT0 + 4);
  EXPECT_EQ(node("nod_0000000000000004").gpu_problem, why);
  EXPECT_FALSE(node("nod_0000000000000004").gpus[7].healthy);
  ok(NodeHeartbeat{.node_id = "nod_0000000000000004"}, kT0 + 5);
  EXPECT_EQ(node("nod_0000000000000004").state(), NodeState::kReady);
}

TEST_F(ImagePullTest, ANodesImageListingIsKeptUntilItReportsAnother) {
  ok(NodeHeartbeat{.node_id = kPooled,
                   .images_reported = true,
                   .images = {NodeImage{.id = "abc",
                                        .names = {"docker.io/library/busybox:latest"},
                                        .size_bytes = 4'000'000}},
                   .image_store = {.total_bytes = 100, .free_bytes = 40}},
     kT0 + 1);
  ok(NodeHeartbeat{.node_id = kPooled}, kT0 + 2);  // Unchanged: not sent again.
  ASSERT_EQ(node(kPooled).images.size(), 1u);
  EXPECT_EQ(node(kPooled).image_store.free_bytes, 40);
  EXPECT_EQ(node(kPooled).images_at_ms, kT0 + 1);
}

}  // namespace
}  // namespace allot
