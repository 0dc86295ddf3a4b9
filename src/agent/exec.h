// One exec or shell session on the node (docs/api.md, "Exec and shell"): the command runs with
// pipes, or with a pseudo-terminal for a TTY session, and speaks the session's frames
// (client/frames.h) on the stream allotd asked for, until the command has ended and its output
// is sent. A session whose stream breaks ends its command (SIGHUP, then SIGKILL).
#pragma once

#include <string>
#include <vector>

#include "client/stream.h"

namespace allot::agent {

struct ExecSpec {
  std::vector<std::string> argv;  // What runs on the node: the runtime's exec_argv().
  bool tty = false;
  int cols = 80;
  int rows = 24;
};

boost::asio::awaitable<void> run_exec(net::Stream& stream, ExecSpec spec);

}  // namespace allot::agent
