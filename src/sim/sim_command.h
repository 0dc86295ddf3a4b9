// `allot sim`: offline experiments that drive the scheduler on trace data, with no server.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

// In allot::cli beside the other add_*_commands, so that main registers it the same way.
namespace allot::cli {

// Registers `allot sim policies` (the registry's names), `allot sim replay`, the fill-the-cluster
// experiment of the FGD paper on the Alibaba openb trace (see sim/replay.h), and `allot sim
// resample`, which prints a resample of a pod list with another mix of work (see sim/resample.h),
// and `allot sim forecast`, which scores the demand forecast on a trace (see
// sim/forecast_report.h). Bad input exits 2 with the file, line and field.
void add_sim_commands(CLI::App& app, Action& action);

}  // namespace allot::cli
