// Prometheus metrics: the latency histograms that the API and the scheduler record into while
// allotd runs, and the text exposition format they and the state's gauges are written in.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "core/kernel/state.h"

namespace allot {

// Counts of observations per bucket, their sum and count. Not thread-safe by itself.
class Histogram {
 public:
  // Upper bounds in seconds: 100 us to 10 s, which covers a placement decision (microseconds) as
  // well as an API call that waits for a group commit (milliseconds).
  static constexpr std::array<double, 14> kBoundsS = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0};
  void observe(double seconds);
  // The `name_bucket`, `name_sum` and `name_count` lines, with `labels` ("a=\"b\"" or empty).
  void write(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::array<uint64_t, kBoundsS.size()> buckets_{};  // Not cumulative; write() adds them up.
  uint64_t count_ = 0;
  double sum_s_ = 0;
};

// What allotd measures as it runs. Any thread may record; the /metrics route reads.
class Metrics {
 public:
  void record_http(const std::string& method, const std::string& route, int status, double seconds);
  void record_schedule(double seconds);
  // One store transaction of `rows` rows.
  void record_commit(size_t rows, double seconds);
  // The histograms in the text format, with their HELP and TYPE lines.
  std::string render() const;
  // Adds what `more` writes (in the text format) to every rendering. Set before serving.
  void add_to_render(std::function<std::string()> more) { more_ = std::move(more); }

 private:
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, Histogram> http_;  // Guarded by mutex_.
  Histogram schedule_;                                                   // Guarded by mutex_.
  Histogram commit_;                                                     // Guarded by mutex_.
  uint64_t rows_written_ = 0;                                            // Guarded by mutex_.
  std::function<std::string()> more_;  // Set before any rendering.
};

// The gauges and counters read off the state at `now_ms` (nodes, GPUs, queue, instances, money,
// the ledger) in the text format.
std::string render_state_metrics(const State& state, TimeMs now_ms);

// A label value with `\`, `"` and newlines escaped.
std::string label_value(const std::string& text);

}  // namespace allot
