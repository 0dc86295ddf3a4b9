// `allot sim chaos`: the whole core, its store and the scheduler driven through random but seeded
// sequences of everything tenants, operators and agents do, with faults injected at the store,
// and the core's invariants (core/kernel/invariants.h) checked after every step. In the spirit of
// TigerBeetle's VOPR: a seed replays exactly, so a violation is found again by its seed and step.
//
// Faults, drawn per step:
//   commit_failed  the store refuses the step's transaction; the core reloads from the store and
//                  must be as it was before the step (nothing acknowledged was lost, nothing
//                  refused was kept);
//   crash          the transaction commits, then the controller dies before answering; a new
//                  core loads from the store, must equal the one that died, and serves on from
//                  there (Core::resume).
// At the end of each seed the state loaded from the store must equal the state in memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "sim/replay.h"

namespace allot::sim {

struct ChaosOptions {
  SeedRange seeds{1, 100};
  int steps = 200;        // Per seed, after the setup.
  int fault_percent = 4;  // Chance in 200 of each kind of fault at each step.
  // A deliberately broken invariant, for proving the checks catch one: at this step (0: never) a
  // GPU's allocated milli is written wrong into the core behind its back.
  int corrupt_gpu_at_step = 0;
};

struct ChaosViolation {
  uint64_t seed = 0;
  int step = 0;  // 0: the setup.
  std::string action;
  std::string invariant;
  std::string detail;
};

struct ChaosReport {
  int64_t seeds_run = 0;
  int64_t steps = 0;
  int64_t commands = 0;
  int64_t refused = 0;  // Commands the core refused (expected: chaos asks for wrong things too).
  int64_t checks = 0;   // Invariant checks run.
  int64_t commit_failed = 0;
  int64_t crashes = 0;
  // What the runs reached, summed over the seeds' final states: instances by state, nodes that
  // were lost at the end, ledger transfers and events. A run that reaches little checks little.
  std::map<std::string, int64_t> instances;
  int64_t nodes_lost = 0;
  int64_t transfers = 0;
  int64_t events = 0;
  std::vector<ChaosViolation> violations;  // A seed stops at its first step with any.
  double wall_s = 0;
};

// Runs every seed of the range; fails only when the store cannot be opened.
[[nodiscard]] Result<ChaosReport> run_chaos(const ChaosOptions& options);

nlohmann::json to_json(const ChaosReport& report);
std::string to_table(const ChaosReport& report);

}  // namespace allot::sim
