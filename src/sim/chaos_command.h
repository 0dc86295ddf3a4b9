// `allot sim chaos`: registered beside the other simulations (sim/sim_command.cc).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace allot::cli {

// Registers `allot sim chaos --seeds A-B [--steps N] [--fault-percent P] [--corrupt-gpu-at STEP]`
// under `sim`. Exits 0 with no violation, 8 with any (each named with its seed and step), 2 on
// bad flags. `output` is the top-level -o.
void add_chaos_command(CLI::App& sim, const CLI::Option* output, Action& action);

}  // namespace allot::cli
