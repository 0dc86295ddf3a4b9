// Where a node keeps its work's volumes, and what a hostile or broken work item cannot make of
// them; how a container is asked to mount them.
#include "agent/runtime/volumes.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "agent/runtime/container_runtime.h"

namespace allot::agent {
namespace {

using nlohmann::json;

class VolumeDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("allot-volumes-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    dirs_ = {.local = (root_ / "local").string(), .nfs = (root_ / "nfs").string()};
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static json item(const std::string& id, const std::string& backend) {
    return {{"volume_id", id},
            {"name", "ckpt-1"},
            {"backend", backend},
            {"path", "/ckpt"},
            {"read_only", false}};
  }

  std::filesystem::path root_;
  VolumeDirs dirs_;
};

TEST_F(VolumeDirsTest, EachVolumeIsTheDirectoryOfItsIdUnderItsBackendsRoot) {
  std::map<std::string, std::string> env;
  auto binds = volume_binds(
      json::array({item("vol_00000000000000aa", "local"), item("vol_00000000000000bb", "nfs")}),
      dirs_, /*in_container=*/false, env);
  ASSERT_TRUE(binds) << binds.error().message;
  ASSERT_EQ(binds->size(), 2U);
  EXPECT_EQ((*binds)[0].source, dirs_.local + "/vol_00000000000000aa");
  EXPECT_EQ((*binds)[1].source, dirs_.nfs + "/vol_00000000000000bb");
  EXPECT_TRUE(std::filesystem::is_directory((*binds)[0].source));
  // The local root is the agent's alone; the volume itself is open to the workload's user.
  struct stat st{};
  ASSERT_EQ(::stat(dirs_.local.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);
  ASSERT_EQ(::stat((*binds)[0].source.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777U);
  // A process finds the directory itself; a container the path it is mounted at.
  EXPECT_EQ(env["ALLOT_VOLUME_CKPT_1"], dirs_.nfs + "/vol_00000000000000bb");
  std::map<std::string, std::string> inside;
  ASSERT_TRUE(
      volume_binds(json::array({item("vol_00000000000000aa", "local")}), dirs_, true, inside));
  EXPECT_EQ(inside["ALLOT_VOLUME_CKPT_1"], "/ckpt");
}

TEST_F(VolumeDirsTest, AnIdThatIsNotAVolumesIdNeverBecomesAPath) {
  for (const char* id : {"../../etc", "vol_../../../../etc", "vol_0000000000000/aa", "",
                         "vol_00000000000000AA", "vol_00000000000000aa/.."}) {
    std::map<std::string, std::string> env;
    auto binds = volume_binds(json::array({item(id, "local")}), dirs_, false, env);
    EXPECT_FALSE(binds) << id;
    EXPECT_TRUE(env.empty()) << id;
  }
  EXPECT_FALSE(std::filesystem::exists(root_));
}

TEST_F(VolumeDirsTest, AnNfsVolumeOnANodeWithoutAnExportFailsToStartAndSaysWhy) {
  dirs_.nfs.clear();
  std::map<std::string, std::string> env;
  auto binds = volume_binds(json::array({item("vol_00000000000000aa", "nfs")}), dirs_, false, env);
  ASSERT_FALSE(binds);
  EXPECT_NE(binds.error().message.find("--nfs-dir"), std::string::npos) << binds.error().message;
}

TEST(ContainerVolumeArgsTest, AVolumeIsBoundAtItsPathReadOnlyWhenAsked) {
  WorkloadSpec spec{.instance_id = "ins_00000000000000aa",
                    .argv = {"true"},
                    .image = "docker.io/library/busybox:1"};
  spec.volumes = {{.name = "data", .source = "/v/vol_1", .path = "/data"},
                  {.name = "ref", .source = "/v/vol_2", .path = "/ref", .read_only = true}};
  const auto args = container_run_args(spec, ContainerOptions{}, "net", "/env", "/notice");
  auto has = [&](const std::string& value) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--mount" && args[i + 1] == value) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("type=bind,source=/v/vol_1,destination=/data"));
  EXPECT_TRUE(has("type=bind,source=/v/vol_2,destination=/ref,ro=true"));
}

}  // namespace
}  // namespace allot::agent
