// Volumes under real agents and processes: what one instance writes the next one reads, after a
// preemption and requeue as after an ordinary end; a local volume holds the work that mounts it to
// its node, even while another node is free.
#include <string>

#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class VolumeTest : public ClusterTest {
 protected:
  VolumeTest() {
    agent_count_ = 1;
    extra_daemon_args_ = {"--preempt-grace-ms", "2000"};
  }

  std::string make_volume(const std::string& name) {
    return call("POST", "/v1/volumes", {{"name", name}, {"size_gb", 10}}, 201)["id"];
  }

  json volume(const std::string& id) { return call("GET", "/v1/volumes/" + id, nullptr, 200); }
};

TEST_F(VolumeTest, ARequeuedRunResumesFromTheCheckpointItsLastRunLeftOnItsVolume) {
  const std::string ckpt = make_volume("ckpt");
  // A training loop's shape: resume from the last checkpoint, say from where, keep checkpointing.
  const std::string script =
      "f=\"$ALLOT_VOLUME_CKPT/step\"; n=$(cat \"$f\" 2>/dev/null || echo 0); echo \"from $n\"; "
      "echo $((n + 1)) > \"$f\"; while :; do sleep 0.05; done";
  const std::string spot = launch({{"gpus", 8},
                                   {"price_class", "spot"},
                                   {"requeue", true},
                                   {"volumes", {{{"volume", "ckpt"}, {"path", "/ckpt"}}}},
                                   {"command", {"/bin/sh", "-c", script}}});
  ASSERT_TRUE(eventually([&] { return logs(spot).find("from 0\n") != std::string::npos; }))
      << logs(spot) << instance(spot).dump();
  EXPECT_EQ(volume(ckpt)["node_id"], instance(spot)["node_id"]);

  const std::string urgent = launch({{"gpus", 8}, {"command", {"sleep", "60"}}});
  ASSERT_TRUE(instance_reaches(urgent, "running"));
  EXPECT_EQ(instance(spot)["state"], "queued");
  EXPECT_EQ(instance(spot)["spec"]["volumes"][0]["volume_id"], ckpt);
  // Deleting it now would lose the checkpoint of queued work: refused.
  call("DELETE", "/v1/volumes/ckpt", nullptr, 409);

  call("POST", "/v1/instances/" + urgent + "/stop", nullptr, 200);
  ASSERT_TRUE(eventually([&] { return logs(spot).find("from 1\n") != std::string::npos; }))
      << logs(spot) << instance(spot).dump();
  EXPECT_EQ(instance(spot)["run"], 1);
}

class LocalVolumeTest : public VolumeTest {
 protected:
  LocalVolumeTest() { agent_count_ = 2; }
};

TEST_F(LocalVolumeTest, WorkMountingALocalVolumeWaitsForItsNodeAndReadsWhatWasWrittenThere) {
  const std::string data = make_volume("data");
  const std::string writer = launch(
      {{"gpus", 8},
       {"volumes", {{{"volume", "data"}, {"path", "/data"}}}},
       {"command", {"/bin/sh", "-c", "echo written-here > \"$ALLOT_VOLUME_DATA/f\"; sleep 600"}}});
  ASSERT_TRUE(instance_reaches(writer, "running"));
  const std::string node = instance(writer)["node_id"];
  EXPECT_EQ(volume(data)["node_id"], node);

  // A reader waits for the writer's node, though the other node has every GPU free.
  const std::string reader =
      launch({{"gpus", 8},
              {"volumes", {{{"volume", "data"}, {"path", "/data"}, {"read_only", true}}}},
              {"command", {"/bin/sh", "-c", "cat \"$ALLOT_VOLUME_DATA/f\""}}});
  ASSERT_TRUE(eventually([&] {
    return instance(reader)["reason"].get<std::string>().find("local volumes are on node " +
                                                              node) != std::string::npos;
  })) << instance(reader).dump();
  EXPECT_EQ(instance(reader)["state"], "queued");

  call("POST", "/v1/instances/" + writer + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(reader, "succeeded")) << instance(reader).dump();
  EXPECT_EQ(instance(reader)["node_id"], node);
  EXPECT_EQ(logs(reader), "written-here\n");
}

}  // namespace
}  // namespace allot::testing
