#include "sim/replay.h"

#include <cassert>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/trace.h"

namespace allot::sim {
namespace {

// The curve is reported over this window of arrived%, as the paper plots it.
constexpr int kFirstReportedPct = 90;
constexpr int kLastReportedPct = 130;

std::optional<uint64_t> whole_number(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

double rounded(double value) { return std::round(value * 1000.0) / 1000.0; }

nlohmann::ordered_json json_of(std::optional<double> value) {
  return value ? nlohmann::ordered_json(rounded(*value)) : nlohmann::ordered_json(nullptr);
}

// Sums alloc% per integer arrived% so that each bucket's mean can be taken at the end.
class Curve {
 public:
  explicit Curve(int64_t capacity_milli) : capacity_(static_cast<double>(capacity_milli)) {}

  void record(int64_t arrived_milli, int64_t allocated_milli) {
    const int arrived_pct =
        static_cast<int>(std::llround(100.0 * static_cast<double>(arrived_milli) / capacity_));
    auto& [sum, count] = buckets_[arrived_pct];
    sum += 100.0 * static_cast<double>(allocated_milli) / capacity_;
    ++count;
  }

  std::map<int, double> means() const {
    std::map<int, double> means;
    for (const auto& [pct, bucket] : buckets_) {
      means[pct] = bucket.first / static_cast<double>(bucket.second);
    }
    return means;
  }

 private:
  double capacity_;
  std::map<int, std::pair<double, int64_t>> buckets_;
};

}  // namespace

Result<SeedRange> parse_seeds(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("--seeds '{}': {} (want N or A-B with A <= B)", text, why));
  };
  const size_t dash = text.find('-');
  const std::optional<uint64_t> first = whole_number(text.substr(0, dash));
  const std::optional<uint64_t> last =
      dash == std::string_view::npos ? first : whole_number(text.substr(dash + 1));
  if (!first || !last) return bad("not a seed or a range of seeds");
  if (*first > *last) return bad("the range is backwards");
  if (*last - *first >= kMaxSeeds) return bad(fmt::format("more than {} seeds", kMaxSeeds));
  return SeedRange{*first, *last};
}

uint64_t draw_below(std::mt19937_64& rng, uint64_t bound) {
  assert(bound > 0);
  // Values at or past the last whole multiple of `bound` would favour small results.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         (std::numeric_limits<uint64_t>::max() % bound + 1) % bound;
  uint64_t value = rng();
  while (value > limit) value = rng();
  return value % bound;
}

Result<std::vector<sched::Request>> resize_workload(const std::vector<sched::Request>& trace,
                                                    int64_t target_milli, std::mt19937_64& rng) {
  std::vector<sched::Request> pods = trace;
  int64_t total = 0;
  for (const sched::Request& pod : pods) total += gpu_milli_of(pod);
  if (total < target_milli) {
    // Without a GPU pod the total could never grow and the loop below would not end.
    if (total == 0) return fail(ErrorCode::kInvalidArgument, "the trace has no GPU pods");
    while (true) {
      const sched::Request& pod = trace[draw_below(rng, trace.size())];
      if (total + gpu_milli_of(pod) > target_milli) break;
      if (pods.size() >= kMaxWorkloadPods) {
        return fail(ErrorCode::kLimitExceeded,
                    fmt::format("the resized workload passes {} pods", kMaxWorkloadPods));
      }
      pods.push_back(pod);
      total += gpu_milli_of(pod);
    }
  }
  while (total > target_milli) {
    // Order does not matter here (the arrivals are shuffled next), so remove by swapping in the
    // last pod rather than shifting them all.
    const size_t victim = draw_below(rng, pods.size());
    total -= gpu_milli_of(pods[victim]);
    std::swap(pods[victim], pods.back());
    pods.pop_back();
  }
  return pods;
}

namespace {

template <typename T>
void fisher_yates(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[draw_below(rng, i)]);
  }
}

}  // namespace

void shuffle_arrivals(std::vector<sched::Request>& pods, std::mt19937_64& rng) {
  fisher_yates(pods, rng);
}

void shuffle_nodes(std::vector<sched::NodeView>& nodes, std::mt19937_64& rng) {
  fisher_yates(nodes, rng);
}

int64_t capacity_milli(const std::vector<sched::NodeView>& nodes) {
  int64_t total = 0;
  for (const sched::NodeView& node : nodes) total += int64_t{1000} * std::ssize(node.gpus);
  return total;
}

SeedRun place_arrivals(const sched::Policy& policy, const sched::CycleState& cycle,
                       std::vector<sched::NodeView>& nodes,
                       const std::vector<sched::Request>& arrivals, int64_t capacity_milli) {
  assert(capacity_milli > 0);
  SeedRun run;
  Curve curve(capacity_milli);
  std::string why;
  // Measured, not injected: the time is reported and never steers a decision, so the result
  // stays a pure function of the inputs and the seed.
  const auto start = std::chrono::steady_clock::now();
  // The Placer gives the policy's own answers (a test in src/sched checks it step by step) while
  // keeping each node's scores until that node changes.
  sched::Placer placer(policy, cycle, nodes);
  for (const sched::Request& pod : arrivals) {
    const int64_t milli = gpu_milli_of(pod);
    run.arrived_milli += milli;
    ++run.pods;
    if (std::optional<sched::Choice> choice = placer.place(pod, why)) {
      assert(choice->node < nodes.size());
      placer.allocate(pod, *choice);
      run.allocated_milli += milli;
      ++run.placed;
    }
    curve.record(run.arrived_milli, run.allocated_milli);
  }
  run.placement_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nodes = placer.nodes();
  run.alloc_pct_by_arrived = curve.means();
  return run;
}

Result<SeedRun> replay_seed(const sched::Policy& policy, const std::vector<sched::NodeView>& nodes,
                            const std::vector<sched::Request>& trace, uint64_t seed, double tune) {
  if (!(tune > 0 && tune <= kMaxTune)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("--tune {}: want a number above 0 and at most {}", tune, kMaxTune));
  }
  const int64_t capacity = capacity_milli(nodes);
  if (capacity == 0) return fail(ErrorCode::kInvalidArgument, "the nodes have no GPUs");
  std::mt19937_64 rng(seed);
  const auto target = static_cast<int64_t>(std::llround(tune * static_cast<double>(capacity)));
  Result<std::vector<sched::Request>> arrivals = resize_workload(trace, target, rng);
  if (!arrivals) return std::unexpected(arrivals.error());
  shuffle_arrivals(*arrivals, rng);
  std::vector<sched::NodeView> fresh = nodes;
  shuffle_nodes(fresh, rng);
  return place_arrivals(policy, sched::typical_shapes(trace), fresh, *arrivals, capacity);
}

Result<Report> replay(const sched::Policy& policy, const std::vector<sched::NodeView>& nodes,
                      const std::vector<sched::Request>& trace, SeedRange seeds, double tune) {
  assert(seeds.first <= seeds.last);
  std::vector<SeedRun> runs;
  for (uint64_t seed = seeds.first;; ++seed) {
    Result<SeedRun> run = replay_seed(policy, nodes, trace, seed, tune);
    if (!run) return std::unexpected(run.error());
    runs.push_back(std::move(*run));
    if (seed == seeds.last) break;  // Tested here so that a range ending at the maximum ends.
  }
  return summarise(runs, capacity_milli(nodes) / 1000);
}

Report summarise(const std::vector<SeedRun>& runs, int64_t gpus_total) {
  assert(!runs.empty());
  Report report;
  report.gpus_total = gpus_total;
  const auto count = static_cast<double>(runs.size());
  double decisions = 0;
  double placement_s = 0;
  std::vector<double> unallocated;
  for (const SeedRun& run : runs) {
    report.pods_arrived += static_cast<double>(run.pods) / count;
    decisions += static_cast<double>(run.pods);
    placement_s += run.placement_s;
    if (auto it = run.alloc_pct_by_arrived.find(100); it != run.alloc_pct_by_arrived.end()) {
      unallocated.push_back(100.0 - it->second);
    }
  }
  report.decisions_per_s = placement_s > 0 ? decisions / placement_s : 0;
  if (unallocated.size() == runs.size()) {
    double mean = 0;
    for (double value : unallocated) mean += value / count;
    double squares = 0;
    for (double value : unallocated) squares += (value - mean) * (value - mean);
    report.unallocated_pct_at_100_mean = mean;
    report.unallocated_pct_at_100_sd = runs.size() > 1 ? std::sqrt(squares / (count - 1)) : 0.0;
  }
  for (int pct = kFirstReportedPct; pct <= kLastReportedPct; ++pct) {
    double sum = 0;
    int seen = 0;
    for (const SeedRun& run : runs) {
      if (auto it = run.alloc_pct_by_arrived.find(pct); it != run.alloc_pct_by_arrived.end()) {
        sum += it->second;
        ++seen;
      }
    }
    report.alloc_pct_by_arrived[pct] = seen > 0 ? std::optional<double>(sum / seen) : std::nullopt;
  }
  return report;
}

nlohmann::ordered_json to_json(const Report& report) {
  nlohmann::ordered_json curve = nlohmann::ordered_json::object();
  for (const auto& [pct, value] : report.alloc_pct_by_arrived) {
    curve[std::to_string(pct)] = json_of(value);
  }
  return {{"policy", report.policy},
          {"trace", report.trace},
          {"seeds", report.seeds},
          {"gpus_total", report.gpus_total},
          {"pods_arrived", rounded(report.pods_arrived)},
          {"unallocated_pct_at_100",
           {{"mean", json_of(report.unallocated_pct_at_100_mean)},
            {"sd", json_of(report.unallocated_pct_at_100_sd)}}},
          {"alloc_pct_by_arrived", curve},
          {"decisions_per_s", rounded(report.decisions_per_s)},
          {"wall_s", rounded(report.wall_s)}};
}

std::string to_table(const Report& report) {
  const auto pct = [](std::optional<double> value) {
    return value ? fmt::format("{:.2f}", *value) : std::string("-");
  };
  std::string text = fmt::format(
      "policy {} on {} (seeds {}): {} GPUs, {:.0f} pods arrived per seed\n"
      "unallocated GPU % at arrived 100 %: {} (sd {})\n",
      report.policy, report.trace, report.seeds, report.gpus_total, report.pods_arrived,
      pct(report.unallocated_pct_at_100_mean), pct(report.unallocated_pct_at_100_sd));
  text += "allocated % at arrived %:";
  for (const auto& [arrived, value] : report.alloc_pct_by_arrived) {
    if (arrived % 5 == 0) text += fmt::format(" {}:{}", arrived, pct(value));
  }
  text +=
      fmt::format("\n{:.0f} decisions/s, {:.1f} s wall\n", report.decisions_per_s, report.wall_s);
  return text;
}

}  // namespace allot::sim
