// A closed-loop HTTP load generator: T threads, each with its own keep-alive connection, send
// requests back to back and record each one's latency. Prints one JSON object of results.
//
//   http_load --url http://127.0.0.1:8080 --key KEY --threads 16 --requests 8000
//     --method POST --path /v1/tenants --body '{"name": "t-{n}"}'
//
// "{n}" in the path or body becomes a number unique across the run. With --paths FILE, request n
// goes to line n (mod the line count) of FILE instead of --path.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "client/http_client.h"

namespace {

std::string fill(std::string text, long n) {
  for (size_t at; (at = text.find("{n}")) != std::string::npos;) {
    text.replace(at, 3, std::to_string(n));
  }
  return text;
}

double percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t index =
      std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[index];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"closed-loop HTTP load"};
  std::string url = "http://127.0.0.1:8080", key, method = "GET", path = "/healthz", body;
  std::string paths_file;
  int threads = 8;
  long requests = 10'000;
  app.add_option("--url", url);
  app.add_option("--key", key);
  app.add_option("--threads", threads)->check(CLI::Range(1, 1024));
  app.add_option("--requests", requests)->check(CLI::PositiveNumber);
  app.add_option("--method", method);
  app.add_option("--path", path);
  app.add_option("--body", body);
  app.add_option("--paths", paths_file)->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> paths;
  if (!paths_file.empty()) {
    std::ifstream in(paths_file);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) paths.push_back(line);
    }
  }
  auto path_of = [&](long n) {
    return paths.empty() ? fill(path, n) : paths[static_cast<size_t>(n) % paths.size()];
  };

  std::atomic<long> next{0};
  std::mutex mutex;
  std::vector<double> latencies_ms;
  std::map<int, long> statuses;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads));
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      auto client = allot::HttpClient::connect_to(url);
      if (!client) return;
      std::vector<double> mine;
      std::map<int, long> my_statuses;
      for (long n; (n = next++) < requests;) {
        const auto sent = std::chrono::steady_clock::now();
        auto response = (*client)->send(method, path_of(n), fill(body, n), key);
        const auto done = std::chrono::steady_clock::now();
        mine.push_back(std::chrono::duration<double, std::milli>(done - sent).count());
        ++my_statuses[response ? response->status : 0];
      }
      std::lock_guard lock(mutex);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      for (const auto& [status, count] : my_statuses) statuses[status] += count;
    });
  }
  for (auto& worker : workers) worker.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  nlohmann::json status_counts = nlohmann::json::object();
  for (const auto& [status, count] : statuses) status_counts[std::to_string(status)] = count;
  const nlohmann::json result = {
      {"method", method},
      {"path", paths_file.empty() ? path : "lines of " + paths_file},
      {"threads", threads},
      {"requests", latencies_ms.size()},
      {"seconds", seconds},
      {"requests_per_s", static_cast<double>(latencies_ms.size()) / seconds},
      {"p50_ms", percentile(latencies_ms, 0.50)},
      {"p99_ms", percentile(latencies_ms, 0.99)},
      {"max_ms", latencies_ms.empty() ? 0 : latencies_ms.back()},
      {"statuses", status_counts},
  };
  std::printf("%s\n", result.dump().c_str());
  return statuses.size() == 1 && statuses.begin()->first < 300 ? 0 : 1;
}
