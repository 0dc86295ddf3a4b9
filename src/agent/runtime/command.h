// Running a short helper command (podman's image, ps and rm verbs) to its end and reading what it
// printed. The agent is multi-threaded, so the child is started with posix_spawn.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/error.h"

namespace allot::agent {

struct CommandOutput {
  int exit_code = -1;  // -1 when it was ended by a signal.
  std::string output;  // stdout and stderr together, at most 1 MiB.
};

// kUnavailable when the program cannot be started; a command still running after `timeout` is
// killed and reported with exit_code -1.
[[nodiscard]] Result<CommandOutput> run_command(const std::vector<std::string>& argv,
                                                std::chrono::milliseconds timeout);

// The last non-empty line of `text`, without its newline.
std::string last_line(const std::string& text);

}  // namespace allot::agent
