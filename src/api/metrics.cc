#include "api/metrics.h"

#include <fmt/format.h>

namespace allot {

std::string label_value(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Histogram::observe(double seconds) {
  for (size_t i = 0; i < kBoundsS.size(); ++i) {
    if (seconds <= kBoundsS[i]) {
      ++buckets_[i];
      break;
    }
  }
  ++count_;
  sum_s_ += seconds;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBoundsS.size(); ++i) {
    cumulative += buckets_[i];
    out +=
        fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, kBoundsS[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, count_);
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n", name, braces, sum_s_);
  out += fmt::format("{}_count{} {}\n", name, braces, count_);
}

void Metrics::record_http(const std::string& method, const std::string& route, int status,
                          double seconds) {
  const std::lock_guard lock(mutex_);
  http_[{method, route, status}].observe(seconds);
}

void Metrics::record_schedule(double seconds) {
  const std::lock_guard lock(mutex_);
  schedule_.observe(seconds);
}

void Metrics::record_commit(size_t rows, double seconds) {
  const std::lock_guard lock(mutex_);
  commit_.observe(seconds);
  rows_written_ += rows;
}

std::string Metrics::render() const {
  const std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP allot_http_request_duration_seconds API requests, from read to answer.\n";
  out += "# TYPE allot_http_request_duration_seconds histogram\n";
  for (const auto& [key, histogram] : http_) {
    const auto& [method, route, status] = key;
    histogram.write(out, "allot_http_request_duration_seconds",
                    fmt::format(R"(method="{}",route="{}",code="{}")", label_value(method),
                                label_value(route), status));
  }
  out += "# HELP allot_schedule_duration_seconds One placement decision of the scheduler.\n";
  out += "# TYPE allot_schedule_duration_seconds histogram\n";
  schedule_.write(out, "allot_schedule_duration_seconds", "");
  out += "# HELP allot_store_commit_duration_seconds One store transaction (a batch's rows).\n";
  out += "# TYPE allot_store_commit_duration_seconds histogram\n";
  commit_.write(out, "allot_store_commit_duration_seconds", "");
  out += "# HELP allot_store_rows_written_total Rows (changed objects) written to the store.\n";
  out += "# TYPE allot_store_rows_written_total counter\n";
  out += fmt::format("allot_store_rows_written_total {}\n", rows_written_);
  if (more_) out += more_();
  return out;
}

}  // namespace allot
