// The FGD paper's "fill the cluster" experiment (shared/data/README.md): a trace's pods, resized
// to `tune` times the cluster's GPU capacity, arrive once each in a seeded random order and are
// placed by a policy, never retried and never leaving; the curve of allocated against arrived GPU
// milli measures how much of the cluster the policy strands.
//
// Randomness is std::mt19937_64 seeded with the seed, with our own bounded draw and
// Fisher-Yates shuffle (the standard's distributions differ between libraries). The paper's
// simulator uses Go's RNG, so one seed here is not the paper's seed of that number: per-seed
// figures differ, means over seeds are comparable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "sched/sched.h"

namespace allot::sim {

// At most this many seeds in one run: each is a full experiment of about ten thousand decisions.
inline constexpr uint64_t kMaxSeeds = 1000;
// The resized workload may hold at most this many pods, whatever `tune` asks for.
inline constexpr size_t kMaxWorkloadPods = 10'000'000;
inline constexpr double kMaxTune = 10.0;

struct SeedRange {
  uint64_t first = 0;
  uint64_t last = 0;  // Inclusive.
};

// "N" or "A-B" with A <= B (at most kMaxSeeds of them); anything else is kInvalidArgument.
[[nodiscard]] Result<SeedRange> parse_seeds(std::string_view text);

// A uniform draw from [0, bound), bound > 0, by rejection so that it is unbiased and the same
// on every standard library.
uint64_t draw_below(std::mt19937_64& rng, uint64_t bound);

// The trace resized to `target_milli` of GPU milli: while short, append copies of pods drawn
// uniformly with replacement until the next draw would pass the target; while over, remove
// random pods. Fails when the trace has no GPU pod to grow with, or the result would pass
// kMaxWorkloadPods.
[[nodiscard]] Result<std::vector<sched::Request>> resize_workload(
    const std::vector<sched::Request>& trace, int64_t target_milli, std::mt19937_64& rng);

// Fisher-Yates, with draw_below.
void shuffle_arrivals(std::vector<sched::Request>& pods, std::mt19937_64& rng);
// The same for the node order. Policies break ties between equal scores by node order (as the
// paper's simulator does, by node name after giving every node a random numeric prefix per seed),
// so a fixed order would favour the same nodes in every seed.
void shuffle_nodes(std::vector<sched::NodeView>& nodes, std::mt19937_64& rng);

// What one arrival sequence did.
struct SeedRun {
  size_t pods = 0;    // Arrived (placed or refused): the decisions made.
  size_t placed = 0;  // Of them, placed.
  int64_t arrived_milli = 0;
  int64_t allocated_milli = 0;
  // For each integer arrived% = round(100 x arrived / capacity), the mean alloc% = 100 x
  // allocated / capacity over the points recorded at it (one point after every pod).
  std::map<int, double> alloc_pct_by_arrived;
  double placement_s = 0;  // Time spent placing, for decisions per second.
};

// Places `arrivals` in order on `nodes` (which it changes: each placement is allocated), once
// each. `capacity_milli` must be positive.
SeedRun place_arrivals(const sched::Policy& policy, const sched::CycleState& cycle,
                       std::vector<sched::NodeView>& nodes,
                       const std::vector<sched::Request>& arrivals, int64_t capacity_milli);

// The GPU milli of all GPUs on the nodes.
int64_t capacity_milli(const std::vector<sched::NodeView>& nodes);

// One seed of the experiment on fresh copies of `nodes`: resize the trace to tune x capacity,
// shuffle the arrivals, then the node order, and place, with the typical shapes of the trace as
// given (the paper's simulator takes them from the original pods, before resizing).
[[nodiscard]] Result<SeedRun> replay_seed(const sched::Policy& policy,
                                          const std::vector<sched::NodeView>& nodes,
                                          const std::vector<sched::Request>& trace, uint64_t seed,
                                          double tune);

// Means over seeds.
struct Report {
  std::string policy;
  std::string trace;
  std::string seeds;  // As given, e.g. "42-51".
  int64_t gpus_total = 0;
  double pods_arrived = 0;  // Mean per seed.
  // 100 - alloc% at arrived = 100 %, over seeds: sample sd (n - 1; 0 for one seed). Nullopt
  // when some seed recorded no point at 100 (a tiny cluster can step over it).
  std::optional<double> unallocated_pct_at_100_mean;
  std::optional<double> unallocated_pct_at_100_sd;
  // Mean over seeds at each integer arrived% 90..130; nullopt where no seed reached it.
  std::map<int, std::optional<double>> alloc_pct_by_arrived;
  double decisions_per_s = 0;
  double wall_s = 0;
};

// Runs every seed of `seeds` and summarises them (labels and wall_s left for the caller).
[[nodiscard]] Result<Report> replay(const sched::Policy& policy,
                                    const std::vector<sched::NodeView>& nodes,
                                    const std::vector<sched::Request>& trace, SeedRange seeds,
                                    double tune);

// The means over `runs` (at least one), with labels and wall_s left for the caller.
Report summarise(const std::vector<SeedRun>& runs, int64_t gpus_total);

// The report as the benchmark's JSON object, fields in the order documented on Report (numbers
// rounded to 3 decimals; keys of alloc_pct_by_arrived are strings, in numeric order).
nlohmann::ordered_json to_json(const Report& report);

// A short summary for people.
std::string to_table(const Report& report);

}  // namespace allot::sim
