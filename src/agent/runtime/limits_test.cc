// CPU and memory limits: against a stand-in hierarchy everywhere, and against the host's cgroup v2
// where it delegates them (the test skips elsewhere).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/runtime/cgroup.h"
#include "agent/runtime/process_runtime.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/runtime_test_support.h"

namespace allot::agent::test {
namespace {

using std::chrono::milliseconds;
using Limits = RuntimeTest;

WorkloadSpec limited(std::string id) {
  WorkloadSpec spec = shell(std::move(id), "exec sleep 1000");
  spec.cpu_milli = 1'500;
  spec.memory_mib = 64;
  return spec;
}

TEST_F(Limits, LimitsAreWrittenToTheWorkloadsCgroupWhichItJoinsBeforeExec) {
  // A plain directory stands in for /sys/fs/cgroup: the runtime only writes files there.
  const auto root = dir_.path() / "cgroup";
  std::filesystem::create_directories(root);
  std::filesystem::create_directories(root / "allot.slice");
  for (const auto& dir : {root, root / "allot.slice"}) {
    std::ofstream(dir / "cgroup.controllers") << "cpu memory\n";
    std::ofstream(dir / "cgroup.subtree_control") << "cpu memory\n";
  }
  auto opened = open_process_runtime_with(state_dir(), clock_, CgroupHost::probe(root.string()));
  ASSERT_TRUE(opened);
  runtime_ = std::move(*opened);

  const WorkloadStatus started = start(limited("ins_lim"));
  EXPECT_EQ(started.state, WorkloadState::kRunning);
  EXPECT_EQ(started.message, "");
  const auto cgroup = root / "allot.slice" / "ins_lim";
  EXPECT_EQ(read_text(cgroup / "cpu.max"), "150000 100000");
  EXPECT_EQ(read_text(cgroup / "memory.max"), std::to_string(64LL << 20));
  EXPECT_EQ(read_text(cgroup / "cgroup.procs"), std::to_string(started.pid));
}

TEST_F(Limits, WithoutCgroupV2TheWorkloadRunsUnlimitedAndItsStatusSaysSo) {
  auto opened = open_process_runtime_with(state_dir(), clock_,
                                          CgroupHost::probe((dir_.path() / "none").string()));
  ASSERT_TRUE(opened);
  runtime_ = std::move(*opened);
  const WorkloadStatus started = start(limited("ins_unlim"));
  EXPECT_EQ(started.state, WorkloadState::kRunning);
  EXPECT_TRUE(started.message.starts_with("running without resource limits: ")) << started.message;
}

TEST_F(Limits, HostCgroupLimitsApplyWhereTheHostDelegatesThem) {
  if (!std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) {
    GTEST_SKIP() << "no cgroup v2 hierarchy at /sys/fs/cgroup";
  }
  const std::string id = "ins_host_" + std::to_string(::getpid());
  const WorkloadStatus started = start(limited(id));
  if (started.message.starts_with("running without resource limits")) {
    GTEST_SKIP() << started.message;
  }
  const auto cgroup = std::filesystem::path("/sys/fs/cgroup/allot.slice") / id;
  EXPECT_EQ(read_text(cgroup / "cpu.max"), "150000 100000\n");
  EXPECT_EQ(read_text(cgroup / "memory.max"), std::to_string(64LL << 20) + "\n");
  const std::string membership = read_text("/proc/" + std::to_string(started.pid) + "/cgroup");
  EXPECT_NE(membership.find("/allot.slice/" + id), std::string::npos) << membership;
  (void)runtime_->stop(id, milliseconds(0), {});
  wait_until_ended(*runtime_, id);
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(cgroup); }));
}

}  // namespace
}  // namespace allot::agent::test
