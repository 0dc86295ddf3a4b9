// Graceful stops for the programs: SIGTERM and SIGINT are blocked in every thread (call this
// before starting any) and taken by one thread with wait_for_stop_signal(); SIGPIPE is ignored so
// that a closed socket is an error value, not a death.
#pragma once

#include <csignal>

namespace allot {

sigset_t block_stop_signals();
// Blocks until SIGTERM or SIGINT arrives; returns it.
int wait_for_stop_signal(const sigset_t& set);

}  // namespace allot
