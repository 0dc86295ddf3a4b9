// The process runtime's files on disk, one directory per workload under the state directory:
//   <id>/workload.json  what the agent knows (spec, pids, status), rewritten atomically
//   <id>/exit           the workload's outcome, written atomically by its shim
//   <id>/output.log     stdout and stderr, appended
//   <id>/work/          the default working directory
// and what /proc says about a process, to tell a live process from a recycled pid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/runtime/runtime.h"
#include "common/clock.h"
#include "common/error.h"

namespace allot::agent {

struct WorkloadPaths {
  std::string dir;
  std::string record;
  std::string record_tmp;
  std::string exit;
  std::string exit_tmp;
  std::string log;
  std::string work;
  // Holds only the stop notice, so that a container may be given this directory and no other.
  std::string notice_dir;
  std::string notice;
};

WorkloadPaths workload_paths(const std::string& state_dir, std::string_view instance_id);

// Everything needed to track a workload across agent restarts.
struct WorkloadRecord {
  WorkloadSpec spec;
  WorkloadStatus status;  // As last seen; kRunning until its end has been observed.
  pid_t shim_pid = 0;
  uint64_t shim_start_ticks = 0;  // 0: unknown.
  uint64_t pid_start_ticks = 0;   // The workload's; 0: unknown (it ended before it was read).
  std::string cgroup_dir;         // Empty: the workload runs without limits.
  bool stop_requested = false;    // SIGTERM has been sent.
  TimeMs kill_at_ms = 0;          // When SIGKILL is due, once a stop has been requested.
};

// Writes `contents` to `tmp_path` with `mode` from its creation, fsyncs it, and renames it over
// `path`: a crash leaves the old file or the new one, and the data is on disk before it is
// visible. On failure the temporary file is removed and `path` is untouched.
[[nodiscard]] Status write_file_atomically(const std::string& path, const std::string& tmp_path,
                                           const std::string& contents, mode_t mode);

// Writes the record to a temporary file and renames it over the old one, so that a crash leaves
// either the old record or the new one, never half of one.
[[nodiscard]] Status save_record(const WorkloadPaths& paths, const WorkloadRecord& record);

// nullopt when the file is missing or not a record this code wrote.
std::optional<WorkloadRecord> load_record(const std::string& path);

// What the shim wrote to the exit file: "exited CODE", "signal N" or "failed ERRNO".
struct ExitOutcome {
  enum class Kind { kExited, kSignaled, kFailed };
  Kind kind = Kind::kExited;
  int value = 0;
};

// nullopt while the file does not exist (the workload has not ended) or cannot be parsed.
std::optional<ExitOutcome> read_exit_file(const std::string& path);

// The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), or 0 when
// there is no such process. Together with the pid it names one process for the life of the boot.
uint64_t process_start_ticks(pid_t pid);

// True while the process `pid` that started at `start_ticks` exists and is not a zombie.
bool process_alive(pid_t pid, uint64_t start_ticks);

}  // namespace allot::agent
