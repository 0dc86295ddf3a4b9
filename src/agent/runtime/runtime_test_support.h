// Helpers for the runtime's tests: real processes, polled with a generous timeout, since shared
// machines are slow and nothing here may depend on speed.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "agent/runtime/runtime.h"
#include "agent/runtime/state_file.h"
#include "common/clock.h"
#include "support/temp_dir.h"

namespace allot::agent::test {

inline constexpr std::chrono::seconds kPatience{60};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline WorkloadSpec shell(std::string instance_id, std::string script) {
  WorkloadSpec spec;
  spec.instance_id = std::move(instance_id);
  spec.argv = {"/bin/sh", "-c", std::move(script)};
  return spec;
}

// Calls `condition` every 20 ms until it holds; false if it still does not after kPatience.
template <typename Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline std::optional<WorkloadStatus> status_of(Runtime& runtime, std::string_view instance_id) {
  for (auto& status : runtime.poll()) {
    if (status.instance_id == instance_id) return status;
  }
  return std::nullopt;
}

// Polls until the workload is no longer running and returns its status.
inline WorkloadStatus wait_until_ended(Runtime& runtime, std::string_view instance_id) {
  std::optional<WorkloadStatus> status;
  const bool ended = eventually([&] {
    status = status_of(runtime, instance_id);
    return status && status->state != WorkloadState::kRunning;
  });
  EXPECT_TRUE(ended) << instance_id << " did not end within " << kPatience.count() << " s";
  return status.value_or(WorkloadStatus{});
}

// True when no process `pid` runs any more (a zombie has ended too).
inline bool process_gone(pid_t pid) { return !process_alive(pid, process_start_ticks(pid)); }

// A runtime on a fresh state directory, driven by a manual clock; workloads still running at the
// end of a test are killed.
class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { open_runtime(); }

  void TearDown() override {
    if (!runtime_) open_runtime();
    for (const auto& status : runtime_->poll()) {
      if (status.state == WorkloadState::kRunning) {
        (void)runtime_->stop(status.instance_id, std::chrono::milliseconds(0), {});
        wait_until_ended(*runtime_, status.instance_id);
      }
    }
  }

  void open_runtime() {
    auto opened = open_process_runtime(state_dir(), clock_, orphan_timeout_ms_);
    ASSERT_TRUE(opened) << opened.error().message;
    runtime_ = std::move(*opened);
  }

  std::string state_dir() const { return (dir_.path() / "state").string(); }
  std::filesystem::path instance_dir(const std::string& id) const {
    return std::filesystem::path(state_dir()) / id;
  }
  std::filesystem::path work_dir(const std::string& id) const { return instance_dir(id) / "work"; }

  WorkloadStatus start(const WorkloadSpec& spec) {
    auto started = runtime_->start(spec);
    EXPECT_TRUE(started) << (started ? "" : started.error().message);
    return started.value_or(WorkloadStatus{});
  }

  allot::testing::TempDir dir_;
  ManualClock clock_{1'000'000};
  int64_t orphan_timeout_ms_ = kDefaultOrphanTimeoutMs;
  std::unique_ptr<Runtime> runtime_;
};

}  // namespace allot::agent::test
