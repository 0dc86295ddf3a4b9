// Launch latency and creation rate of instances, against a running allotd with agents.
//
// Phase 1: COUNT instances of `true` on a tenth of a GPU, created one after another at RATE per
// second (so that the figure is launch latency, not queueing); each one's latency is its
// started_at - created_at as the controller recorded them (from the POST being applied to the
// agent reporting the process running, or ended if it was already done). Phase 2: COUNT more
// created by THREADS clients at once; the rate counts 201s per second of wall time.
//
//   instance_bench --url URL --key KEY --project PRJ --count 1000 --threads 16
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "client/http_client.h"

namespace {

using nlohmann::json;

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<size_t>(p * static_cast<double>(values.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"instance launch latency and creation rate"};
  std::string url, key, project;
  int count = 1000, threads = 16;
  double rate = 50;
  app.add_option("--url", url)->required();
  app.add_option("--key", key)->required();
  app.add_option("--project", project)->required();
  app.add_option("--count", count);
  app.add_option("--threads", threads);
  app.add_option("--rate", rate, "phase 1 creations per second");
  CLI11_PARSE(app, argc, argv);

  const std::string body =
      json{{"project_id", project}, {"gpu_milli", 100}, {"command", {"true"}}}.dump();
  auto client = allot::HttpClient::connect_to(url).value();
  std::vector<std::string> ids;
  const auto paced_from = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    std::this_thread::sleep_until(paced_from +
                                  std::chrono::microseconds(static_cast<int64_t>(i * 1e6 / rate)));
    auto response = client->send("POST", "/v1/instances", body, key);
    if (!response || response->status != 201) return 1;
    ids.push_back(json::parse(response->body).value("id", ""));
  }
  // Wait until every one has been seen running, then read the controller's timestamps.
  std::vector<double> latencies_ms;
  for (int tries = 0; tries < 600 && latencies_ms.size() < ids.size(); ++tries) {
    latencies_ms.clear();
    for (const std::string& id : ids) {
      auto response = client->send("GET", "/v1/instances/" + id, "", key);
      if (!response) return 1;
      const json instance = json::parse(response->body);
      const int64_t started = instance.value("started_at_ms", int64_t{0});
      if (started == 0) break;
      latencies_ms.push_back(static_cast<double>(started - instance.value("created_at_ms", 0L)));
    }
    if (latencies_ms.size() < ids.size())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  std::atomic<int> next{0}, created{0};
  std::mutex mutex;
  std::vector<std::string> batch_ids;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      auto mine = allot::HttpClient::connect_to(url).value();
      while (next++ < count) {
        auto response = mine->send("POST", "/v1/instances", body, key);
        if (response && response->status == 201) {
          ++created;
          std::lock_guard lock(mutex);
          batch_ids.push_back(json::parse(response->body).value("id", ""));
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Phase 3: how long until every one of them has run to completion.
  size_t done = 0;
  for (int tries = 0; tries < 6000 && done < batch_ids.size(); ++tries) {
    done = 0;
    for (const std::string& id : batch_ids) {
      auto response = client->send("GET", "/v1/instances/" + id, "", key);
      if (!response) return 1;
      if (json::parse(response->body).value("state", "") != "succeeded") break;
      ++done;
    }
    if (done < batch_ids.size()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double drained_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const json result = {{"instances", latencies_ms.size()},
                       {"rate_per_s", rate},
                       {"launch_p50_ms", percentile(latencies_ms, 0.50)},
                       {"launch_p99_ms", percentile(latencies_ms, 0.99)},
                       {"launch_max_ms", percentile(latencies_ms, 1.0)},
                       {"creates", created.load()},
                       {"create_threads", threads},
                       {"creates_per_s", created.load() / seconds},
                       {"completed", done},
                       {"completed_per_s", static_cast<double>(done) / drained_s}};
  std::printf("%s\n", result.dump().c_str());
  // With no creating threads the throughput phase did not run: latency alone decides.
  return latencies_ms.size() == ids.size() && (threads == 0 || created == count) ? 0 : 1;
}
