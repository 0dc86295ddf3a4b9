#include "cli/commands.h"

#include <iostream>
#include <memory>

#include "sim/chaos.h"

namespace allot::cli {
namespace {

struct ChaosFlags {
  std::string seeds = "1-100";
  int steps = 200;
  int fault_percent = 4;
  int corrupt_gpu_at = 0;
};

int run_chaos_command(const ChaosFlags& flags, bool json) {
  const Result<sim::SeedRange> seeds = sim::parse_seeds(flags.seeds);
  if (!seeds) {
    std::cerr << "error: --seeds: " << seeds.error().message << "\n";
    return kUsage;
  }
  const Result<sim::ChaosReport> report =
      sim::run_chaos({.seeds = *seeds,
                      .steps = flags.steps,
                      .fault_percent = flags.fault_percent,
                      .corrupt_gpu_at_step = flags.corrupt_gpu_at});
  if (!report) {
    std::cerr << "error: " << report.error().message << "\n";
    return kLocalFailure;
  }
  if (json) {
    std::cout << sim::to_json(*report).dump() << "\n";
  } else {
    std::cout << sim::to_table(*report);
  }
  return report->violations.empty() ? kOk : kViolations;
}

}  // namespace

void add_chaos_command(CLI::App& sim, const CLI::Option* output, Action& action) {
  CLI::App* chaos = sim.add_subcommand(
      "chaos",
      "drive the core and its store through seeded random steps with faults, checking "
      "the invariants after each");
  auto flags = std::make_shared<ChaosFlags>();
  chaos->add_option("--seeds", flags->seeds, "N or A-B (at most 1000 seeds)")
      ->capture_default_str();
  chaos->add_option("--steps", flags->steps, "steps per seed after the setup")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  chaos
      ->add_option("--fault-percent", flags->fault_percent,
                   "chance in 200 of each fault (failed commit, crash) at a step")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  chaos
      ->add_option("--corrupt-gpu-at", flags->corrupt_gpu_at,
                   "write a GPU's milli wrong at this step, to see the checks catch it")
      ->check(CLI::NonNegativeNumber);
  chaos->callback([flags, output, &action] {
    action = [flags, output](Session&) {
      const bool json =
          output != nullptr && output->count() > 0 && output->as<std::string>() == "json";
      return run_chaos_command(*flags, json);
    };
  });
}

}  // namespace allot::cli
