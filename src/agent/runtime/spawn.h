// Starting a workload through a shim: the agent forks a shim in its own session, the shim forks
// the workload in its own process group, waits for it and writes its outcome to the exit file.
// Because the shim, not the agent, is the workload's parent, the workload and the record of how
// it ended both survive an agent restart.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "agent/runtime/runtime.h"
#include "agent/runtime/state_file.h"
#include "common/error.h"

namespace allot::agent {

// Everything the shim and the workload need, prepared before fork: the agent is multi-threaded,
// so between fork and exec only async-signal-safe calls may run (no allocation, no locks).
struct LaunchPlan {
  std::vector<std::string> exec_paths;  // Tried in order, as execvp searches PATH.
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // "NAME=value", the workload's whole environment.
  std::string log_path;
  std::string work_dir;
  std::string exit_path;
  std::string exit_tmp_path;
  std::string cgroup_dir;  // Empty: no cgroup to join.
  // The shim's watchdog: the file whose modification time says when the agent was last alive,
  // and how long the workload may run without it (0: forever).
  std::string alive_path;
  int64_t orphan_timeout_ms = 0;
  // What the shim runs once it has ended an orphaned workload (empty: nothing): what the
  // workload leaves running outside its process group, such as a container its podman client
  // started, is ended by it.
  std::vector<std::string> orphan_cleanup;
};

// Checks what the spec's fields may hold: an id usable as a directory name, a program to run,
// environment names without '=', no NUL bytes, limits that are not negative and fit in bytes.
[[nodiscard]] Status validate_spec(const WorkloadSpec& spec);

// The plan for a valid spec. The environment is a minimal base (PATH, HOME, LANG) overlaid with
// spec.env, then CUDA_VISIBLE_DEVICES and ALLOT_INSTANCE_ID, which the spec cannot override.
LaunchPlan make_launch_plan(const WorkloadSpec& spec, const WorkloadPaths& paths,
                            const std::string& cgroup_dir);

// The file the agent touches to say it is alive, in the runtime's state directory.
std::string agent_alive_path(const std::string& state_dir);

struct Spawned {
  pid_t shim_pid = 0;
  pid_t workload_pid = 0;      // Also its process group; 0 when the shim could not fork it.
  int start_errno = 0;         // Not 0: the workload never ran the program; errno says why.
  bool shim_reported = false;  // False: the shim ended before saying anything.
};

// Forks the shim and returns once the workload has exec'd its program or failed to. The shim is
// the caller's child and must be reaped by it. kUnavailable when the shim cannot be started.
[[nodiscard]] Result<Spawned> spawn_workload(const LaunchPlan& plan);

}  // namespace allot::agent
