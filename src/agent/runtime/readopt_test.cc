// Agent restarts: a second runtime opened on the same state directory, after the first runtime
// object has been destroyed, takes its workloads up again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/runtime/runtime.h"
#include "agent/runtime/runtime_test_support.h"

namespace allot::agent::test {
namespace {

using std::chrono::milliseconds;
using Readoption = RuntimeTest;

// Waits for a file named "go" in its working directory, then exits with `code`.
WorkloadSpec waits_for_go(std::string id, int code) {
  return shell(std::move(id),
               "while [ ! -f go ]; do sleep 0.05; done; exit " + std::to_string(code));
}

TEST_F(Readoption, RestartedAgentReadoptsARunningWorkloadAndSeesItsRealExitCode) {
  const WorkloadStatus started = start(waits_for_go("ins_a", 5));
  runtime_.reset();  // The agent goes down; the workload does not.
  clock_.advance_ms(1'000);
  open_runtime();

  const auto adopted = status_of(*runtime_, "ins_a");
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->state, WorkloadState::kRunning);
  EXPECT_EQ(adopted->pid, started.pid);
  EXPECT_EQ(adopted->started_at_ms, started.started_at_ms);

  std::ofstream(work_dir("ins_a") / "go").close();
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_a");
  EXPECT_EQ(ended.state, WorkloadState::kExited);
  EXPECT_EQ(ended.exit_code, 5);
}

TEST_F(Readoption, WorkloadThatEndedWhileTheAgentWasDownReportsItsRealExitCode) {
  start(waits_for_go("ins_b", 7));
  runtime_.reset();
  std::ofstream(work_dir("ins_b") / "go").close();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(instance_dir("ins_b") / "exit"); }));
  open_runtime();

  const auto status = status_of(*runtime_, "ins_b");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, WorkloadState::kExited);
  EXPECT_EQ(status->exit_code, 7);
  EXPECT_EQ(status->message, "");
}

TEST_F(Readoption, ReadoptedWorkloadCanBeStopped) {
  start(shell("ins_c", "exec sleep 1000"));
  runtime_.reset();
  open_runtime();
  (void)runtime_->stop("ins_c", milliseconds(60'000), {});
  EXPECT_EQ(wait_until_ended(*runtime_, "ins_c").signal, SIGTERM);
}

TEST_F(Readoption, ReadoptedWorkloadIgnoringSigtermIsKilledAfterTheGrace) {
  start(shell("ins_d", "trap '' TERM; : > ready; sleep 1000"));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(work_dir("ins_d") / "ready"); }));
  (void)runtime_->stop("ins_d", milliseconds(5'000), {});
  runtime_.reset();  // The SIGKILL deadline is in the record, so the next agent carries it out.
  open_runtime();
  clock_.advance_ms(5'000);
  EXPECT_EQ(wait_until_ended(*runtime_, "ins_d").signal, SIGKILL);
}

TEST_F(Readoption, WorkloadLostWhileTheAgentWasDownIsReportedKilled) {
  const WorkloadStatus started = start(shell("ins_e", "exec sleep 1000"));
  runtime_.reset();
  // Simulate a reboot: the shim dies first, so no one records how the workload ended.
  const auto record = nlohmann::json::parse(read_text(instance_dir("ins_e") / "workload.json"));
  const pid_t shim = record.at("shim_pid").get<pid_t>();
  ASSERT_EQ(::kill(shim, SIGKILL), 0);
  ASSERT_EQ(::waitpid(shim, nullptr, 0), shim);  // This test process was the shim's parent.
  ASSERT_EQ(::kill(-started.pid, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return process_gone(started.pid); }));
  open_runtime();

  const auto status = status_of(*runtime_, "ins_e");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, WorkloadState::kExited);
  EXPECT_EQ(status->signal, SIGKILL);
  EXPECT_EQ(status->message, "lost while the agent was down");
}

TEST_F(Readoption, EndedWorkloadKeepsItsStatusAcrossRestartsUntilForgotten) {
  start(shell("ins_f", "exit 2"));
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_f");
  runtime_.reset();
  clock_.advance_ms(1'000);
  open_runtime();
  const auto status = status_of(*runtime_, "ins_f");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 2);
  EXPECT_EQ(status->ended_at_ms, ended.ended_at_ms);

  runtime_->forget("ins_f");
  runtime_.reset();
  open_runtime();
  EXPECT_TRUE(runtime_->poll().empty());
}

TEST_F(Readoption, AWorkloadOutlivesItsAgentUntilTheOrphanTimeoutThenStops) {
  orphan_timeout_ms_ = 1'500;
  open_runtime();
  const WorkloadStatus started = start(shell("ins_o", "exec sleep 600"));
  // While the agent polls, twice the timeout passes and the workload runs on.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    clock_.advance_ms(250);
    EXPECT_EQ(status_of(*runtime_, "ins_o")->state, WorkloadState::kRunning);
    std::this_thread::sleep_for(milliseconds(250));
  }
  // The agent goes and does not come back: the shim stops the workload, and says how.
  runtime_.reset();
  EXPECT_TRUE(eventually([&] { return process_gone(started.pid); }));
  open_runtime();
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_o");
  EXPECT_EQ(ended.state, WorkloadState::kExited);
  EXPECT_EQ(ended.signal, SIGTERM);
}

}  // namespace
}  // namespace allot::agent::test
