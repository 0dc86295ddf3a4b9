// Child processes for the pool providers: scripts run to their end under a deadline, and
// long-running programs started and stopped. Every child gets its own process group, so that a
// script's own children are stopped with it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"

namespace allot {

struct ScriptResult {
  int exit_code = -1;  // 128 + the signal when a signal ended it.
  bool timed_out = false;
  std::string out;  // At most the first 64 KiB of each stream.
  std::string err;
};

// Runs `/bin/sh -c command` with `env` ("NAME=value") added to allotd's environment. Past
// `timeout_ms` the whole process group is killed and the result says it timed out.
[[nodiscard]] Result<ScriptResult> run_script(const std::string& command,
                                              const std::vector<std::string>& env,
                                              int64_t timeout_ms);

// Starts `argv` with its stdout and stderr appended to the given files; returns its pid.
[[nodiscard]] Result<pid_t> start_program(const std::vector<std::string>& argv,
                                          const std::string& out_path, const std::string& err_path);

// SIGTERM to the process group, SIGKILL after `grace_ms`; true once the process is gone.
bool stop_program(pid_t pid, int64_t grace_ms);

}  // namespace allot
