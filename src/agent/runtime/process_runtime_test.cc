// The process runtime with real processes: what a workload sees, how its end is reported, stop.
#include <gtest/gtest.h>
#include <signal.h>

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
using ProcessRuntime = RuntimeTest;

TEST_F(ProcessRuntime, WorkloadSeesItsGpusEnvironmentAndWorkingDirectory) {
  WorkloadSpec spec =
      shell("ins_env",
            "echo \"gpus=$CUDA_VISIBLE_DEVICES\"; echo \"foo=$FOO\"; "
            "echo \"id=$ALLOT_INSTANCE_ID\"; echo \"lang=$LANG\"; echo \"pwd=$(pwd)\"");
  spec.env = {{"FOO", "bar baz"}, {"CUDA_VISIBLE_DEVICES", "not-yours"}};
  spec.gpu_uuids = {"GPU-aaa", "GPU-bbb"};
  const WorkloadStatus started = start(spec);
  EXPECT_EQ(started.state, WorkloadState::kRunning);
  EXPECT_EQ(started.started_at_ms, clock_.now_ms());
  EXPECT_GT(started.pid, 0);

  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_env");
  EXPECT_EQ(ended.exit_code, 0);
  const std::string log = read_text(ended.log_path);
  EXPECT_NE(log.find("gpus=GPU-aaa,GPU-bbb\n"), std::string::npos) << log;
  EXPECT_NE(log.find("foo=bar baz\n"), std::string::npos) << log;
  EXPECT_NE(log.find("id=ins_env\n"), std::string::npos) << log;
  EXPECT_NE(log.find("lang=C.UTF-8\n"), std::string::npos) << log;
  const auto work = std::filesystem::canonical(work_dir("ins_env")).string();
  EXPECT_NE(log.find("pwd=" + work + "\n"), std::string::npos) << log;
}

TEST_F(ProcessRuntime, CudaVisibleDevicesIsSetAndEmptyWithoutGpus) {
  start(shell("ins_nogpu", "echo \"cuda=${CUDA_VISIBLE_DEVICES-unset}.\""));
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_nogpu");
  EXPECT_NE(read_text(ended.log_path).find("cuda=.\n"), std::string::npos);
}

TEST_F(ProcessRuntime, GivenWorkingDirectoryIsUsed) {
  const auto dir = dir_.path() / "elsewhere";
  std::filesystem::create_directories(dir);
  WorkloadSpec spec = shell("ins_dir", "pwd");
  spec.working_dir = dir.string();
  start(spec);
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_dir");
  EXPECT_EQ(read_text(ended.log_path), std::filesystem::canonical(dir).string() + "\n");
}

TEST_F(ProcessRuntime, StdoutAndStderrAreAppendedToTheLog) {
  const WorkloadStatus started = start(shell("ins_log", "echo to-out; echo to-err >&2"));
  EXPECT_EQ(started.log_path, (instance_dir("ins_log") / "output.log").string());
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_log");
  EXPECT_EQ(read_text(ended.log_path), "to-out\nto-err\n");
}

TEST_F(ProcessRuntime, ExitCodeIsReported) {
  start(shell("ins_exit", "exit 3"));
  clock_.advance_ms(500);
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_exit");
  EXPECT_EQ(ended.state, WorkloadState::kExited);
  EXPECT_EQ(ended.exit_code, 3);
  EXPECT_EQ(ended.signal, 0);
  EXPECT_EQ(ended.ended_at_ms, clock_.now_ms());
}

TEST_F(ProcessRuntime, DeathBySignalIsReported) {
  start(shell("ins_sig", "kill -USR1 $$"));
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_sig");
  EXPECT_EQ(ended.state, WorkloadState::kExited);
  EXPECT_EQ(ended.signal, SIGUSR1);
  EXPECT_EQ(ended.exit_code, -1);
}

TEST_F(ProcessRuntime, MissingProgramFailsToStartInsteadOfExiting127) {
  WorkloadSpec spec;
  spec.instance_id = "ins_missing";
  spec.argv = {"allot-no-such-program-anywhere", "--flag"};
  const WorkloadStatus started = start(spec);
  EXPECT_EQ(started.state, WorkloadState::kFailedToStart);
  EXPECT_EQ(started.message, "failed to start: No such file or directory");
  EXPECT_EQ(started.exit_code, -1);
  const auto polled = status_of(*runtime_, "ins_missing");
  ASSERT_TRUE(polled);
  EXPECT_EQ(polled->state, WorkloadState::kFailedToStart);
}

TEST_F(ProcessRuntime, MissingWorkingDirectoryFailsToStart) {
  WorkloadSpec spec = shell("ins_nodir", "true");
  spec.working_dir = (dir_.path() / "absent").string();
  EXPECT_EQ(start(spec).state, WorkloadState::kFailedToStart);
}

TEST_F(ProcessRuntime, StopSendsSigterm) {
  start(shell("ins_stop", "exec sleep 1000"));
  (void)runtime_->stop("ins_stop", milliseconds(60'000), {});
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_stop");
  EXPECT_EQ(ended.signal, SIGTERM);
}

TEST_F(ProcessRuntime, AStoppedWorkloadReadsItsStopNoticeWhenSigtermArrives) {
  const std::string script =
      "trap 'cat \"$ALLOT_STOP_NOTICE\"; exit 0' TERM; : > ready; while :; do sleep 0.05; done";
  start(shell("ins_notice", script));
  ASSERT_TRUE(
      eventually([&] { return std::filesystem::exists(work_dir("ins_notice") / "ready"); }));
  const TimeMs now_ms = clock_.now_ms();
  const Status told =
      runtime_->stop("ins_notice", milliseconds(30'000),
                     {.reason = "preempted", .message = "preempted for instance ins_other"});
  EXPECT_TRUE(told) << told.error().message;
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_notice");
  EXPECT_EQ(ended.exit_code, 0);
  // The whole group has the SIGTERM: the shell may first say that its sleep was terminated.
  const std::string log = read_text(ended.log_path);
  ASSERT_NE(log.find('{'), std::string::npos) << log;
  const auto notice = nlohmann::json::parse(log.substr(log.find('{')));
  EXPECT_EQ(notice["reason"], "preempted");
  EXPECT_EQ(notice["message"], "preempted for instance ins_other");
  EXPECT_EQ(notice["deadline_ms"], now_ms + 30'000);
  EXPECT_EQ(notice["deadline"], format_time(now_ms + 30'000));
  EXPECT_EQ(notice["grace_ms"], 30'000);

  // Forgotten, it leaves no notice; one started again under the same id finds none.
  runtime_->forget("ins_notice");
  EXPECT_FALSE(std::filesystem::exists(instance_dir("ins_notice") / "notice"));
  start(shell("ins_notice", "test -e \"$ALLOT_STOP_NOTICE\" && echo stale || echo none"));
  const WorkloadStatus again = wait_until_ended(*runtime_, "ins_notice");
  EXPECT_TRUE(read_text(again.log_path).ends_with("}\nnone\n")) << read_text(again.log_path);
}

TEST_F(ProcessRuntime, ProgramIgnoringSigtermIsKilledOnceTheGraceHasPassed) {
  // An ignored signal stays ignored across exec, so the sleep ignores SIGTERM too.
  start(shell("ins_ignores_term", "trap '' TERM; : > ready; sleep 1000"));
  ASSERT_TRUE(
      eventually([&] { return std::filesystem::exists(work_dir("ins_ignores_term") / "ready"); }));
  (void)runtime_->stop("ins_ignores_term", milliseconds(5'000), {});
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_EQ(status_of(*runtime_, "ins_ignores_term")->state, WorkloadState::kRunning);
  }
  clock_.advance_ms(5'000);
  const WorkloadStatus ended = wait_until_ended(*runtime_, "ins_ignores_term");
  EXPECT_EQ(ended.signal, SIGKILL);
}

TEST_F(ProcessRuntime, StopReachesTheWholeProcessGroup) {
  start(shell("ins_tree", "sleep 1000 & echo $! > child.pid; wait"));
  const auto pid_file = work_dir("ins_tree") / "child.pid";
  ASSERT_TRUE(eventually([&] { return read_text(pid_file).ends_with("\n"); }));
  const pid_t child = std::stoi(read_text(pid_file));
  ASSERT_FALSE(process_gone(child));
  (void)runtime_->stop("ins_tree", milliseconds(60'000), {});
  EXPECT_EQ(wait_until_ended(*runtime_, "ins_tree").signal, SIGTERM);
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
}

TEST_F(ProcessRuntime, StartingAKnownIdReturnsItsStatusAndStartsNothing) {
  const WorkloadStatus first = start(shell("ins_twice", "exec sleep 1000"));
  const WorkloadStatus second = start(shell("ins_twice", "echo started again"));
  EXPECT_EQ(second.pid, first.pid);
  EXPECT_EQ(second.state, WorkloadState::kRunning);
  EXPECT_EQ(runtime_->poll().size(), 1U);
}

TEST_F(ProcessRuntime, StoppingAnUnknownOrEndedWorkloadDoesNothing) {
  (void)runtime_->stop("ins_unknown", milliseconds(0), {});
  start(shell("ins_done", "exit 4"));
  wait_until_ended(*runtime_, "ins_done");
  (void)runtime_->stop("ins_done", milliseconds(0), {});
  clock_.advance_ms(1);
  EXPECT_EQ(status_of(*runtime_, "ins_done")->exit_code, 4);
}

TEST_F(ProcessRuntime, ForgetDropsAnEndedWorkloadButKeepsItsLog) {
  start(shell("ins_forget", "echo kept"));
  wait_until_ended(*runtime_, "ins_forget");
  runtime_->forget("ins_forget");
  EXPECT_FALSE(status_of(*runtime_, "ins_forget"));
  EXPECT_FALSE(std::filesystem::exists(instance_dir("ins_forget") / "workload.json"));
  EXPECT_FALSE(std::filesystem::exists(instance_dir("ins_forget") / "exit"));
  EXPECT_EQ(read_text(instance_dir("ins_forget") / "output.log"), "kept\n");
}

TEST_F(ProcessRuntime, ForgetLeavesARunningWorkloadTracked) {
  start(shell("ins_busy", "exec sleep 1000"));
  runtime_->forget("ins_busy");
  EXPECT_TRUE(status_of(*runtime_, "ins_busy"));
}

TEST_F(ProcessRuntime, EmptyArgvOrUnsafeIdIsInvalid) {
  WorkloadSpec spec;
  spec.instance_id = "ins_empty";
  EXPECT_EQ(runtime_->start(spec).error().code, ErrorCode::kInvalidArgument);
  spec = shell("../escape", "true");
  EXPECT_EQ(runtime_->start(spec).error().code, ErrorCode::kInvalidArgument);
  spec = shell("ins_env_name", "true");
  spec.env = {{"A=B", "c"}};
  EXPECT_EQ(runtime_->start(spec).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(runtime_->poll().empty());
}

TEST_F(ProcessRuntime, StateDirectoryThatCannotBeWrittenIsUnavailable) {
  const auto file = dir_.path() / "a-file";
  std::ofstream(file) << "not a directory";
  const auto opened = open_process_runtime((file / "state").string(), clock_);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace allot::agent::test
