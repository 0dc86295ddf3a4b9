// A fleet of simulated nodes from one process, against a running allotd: joins --nodes nodes of
// 8 GPUs, each heartbeating every --interval-ms with its GPUs' readings and reports of the work it
// was handed (running, then exited after --run-s), while --launch-rate instances a second are
// launched and --readers clients read pages of instances. After --seconds of that it prints one
// JSON object: heartbeats handled per second and their latency, launch latency (created_at to
// started_at, as allotd recorded them), the reads per second, and allotd's CPU (in cores) and
// RSS, read from /proc/--pid.
//
//   fleet --url http://127.0.0.1:8080 --key KEY --join-token TOKEN --project PRJ --pid PID
//
// Each node also keeps a long poll of /v1/agent/wait open, from its own loopback address, as real
// agents do (--long-poll false: none, and work waits for the node's next heartbeat). A wait that
// answers a newer generation makes its node heartbeat at once for its work, and once more to
// report it running, as an agent reports a workload that changed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "fleet_waits.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kGpus = 8;
constexpr int64_t kPowerMw = 300'000;  // Every GPU draws 300 W.

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct SimNode {
  std::string id;
  std::string credential;
  std::map<std::string, int64_t> running;  // Instance id -> when it exits (wall ms).
  std::set<std::string> exited;            // Reported until the controller forgets them.
  int64_t energy_mj = 0;                   // Per GPU: all draw alike.
  int64_t last_ms = 0;
  std::atomic<int64_t> generation{0};  // The work's, as the last heartbeat's answer gave it.
  size_t beater = 0;                   // The thread that heartbeats it.
};

// Nodes whose waits answered, for their beater thread to heartbeat before its next due one.
struct Woken {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<SimNode*> nodes;

  void add(SimNode* node) {
    {
      std::lock_guard lock(mutex);
      nodes.push_back(node);
    }
    wake.notify_one();
  }
  // The next woken node, or null once `until` comes or `stop` is set.
  SimNode* take_until(Clock::time_point until, const std::atomic<bool>& stop) {
    std::unique_lock lock(mutex);
    wake.wait_until(lock, until, [&] { return !nodes.empty() || stop.load(); });
    if (nodes.empty()) return nullptr;
    SimNode* node = nodes.front();
    nodes.pop_front();
    return node;
  }
};

struct Stats {
  std::mutex mutex;
  std::vector<double> beat_ms;
  long beats_ok = 0;
  long beats_failed = 0;
  long beats_woken = 0;  // Of beats_ok, those sent at once for work a wait announced.
};

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<size_t>(p * static_cast<double>(values.size())))];
}

std::string heartbeat_body(const SimNode& node) {
  std::string body = R"({"node_id":")" + node.id + R"(","gpus":[)";
  for (int i = 0; i < kGpus; ++i) {
    if (i > 0) body += ',';
    body += R"({"index":)" + std::to_string(i) +
            R"(,"utilization_pct":50,"memory_used_bytes":1000000000,"power_mw":)" +
            std::to_string(kPowerMw) + R"(,"energy_mj":)" + std::to_string(node.energy_mj) +
            R"(,"temperature_c":60})";
  }
  body += R"(],"workloads":[)";
  bool first = true;
  auto report = [&](const std::string& id, const char* state) {
    if (!first) body += ',';
    first = false;
    body += R"({"instance_id":")" + id + R"(","state":")" + state + R"(","exit_code":0})";
  };
  for (const auto& [id, ends] : node.running) report(id, "running");
  for (const std::string& id : node.exited) report(id, "exited");
  return body + "]}";
}

// Takes in a heartbeat's answer: work to run, work to stop, ends recorded. Returns how many
// instances it started.
int take_answer(SimNode& node, const json& answer, int64_t now_ms, int64_t run_ms) {
  int started = 0;
  for (const json& item : answer.value("run", json::array())) {
    const std::string id = item.value("instance_id", "");
    if (!node.exited.contains(id)) started += node.running.try_emplace(id, now_ms + run_ms).second;
  }
  for (const json& item : answer.value("stop", json::array())) {
    const std::string id = item.value("instance_id", "");
    if (node.running.erase(id) > 0) node.exited.insert(id);
  }
  for (const json& id : answer.value("forget", json::array())) node.exited.erase(id);
  node.generation = std::max(node.generation.load(), answer.value("generation", int64_t{0}));
  return started;
}

// Heartbeats `nodes` every `interval_ms`, spread evenly, until `stop`; and nodes that `woken`
// hands it at once, twice when the first brings work (the second reports it running).
void beat(std::vector<SimNode*> nodes, Woken& woken, const std::string& url, int64_t interval_ms,
          int64_t run_ms, const std::atomic<bool>& stop, const std::atomic<bool>& measuring,
          Stats& stats) {
  auto client = allot::HttpClient::connect_to(url);
  if (!client) return;
  std::vector<double> mine;
  long ok = 0, failed = 0, by_wait = 0;
  // One heartbeat of `node`; how many instances its answer started (-1: it failed).
  auto beat_one = [&](SimNode& node) {
    const int64_t now_ms = wall_ms();
    if (node.last_ms != 0) node.energy_mj += kPowerMw * (now_ms - node.last_ms) / 1000;
    node.last_ms = now_ms;
    for (auto it = node.running.begin(); it != node.running.end();) {
      if (it->second > now_ms) {
        ++it;
        continue;
      }
      node.exited.insert(it->first);
      it = node.running.erase(it);
    }
    const auto sent = Clock::now();
    auto answer =
        (*client)->send("POST", "/v1/agent/heartbeat", heartbeat_body(node), node.credential);
    const double took = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
    if (!answer || answer->status != 200) {
      if (measuring) ++failed;
      return -1;
    }
    if (measuring) {
      ++ok;
      mine.push_back(took);
    }
    return take_answer(node, json::parse(answer->body, nullptr, false), now_ms, run_ms);
  };
  const auto start = Clock::now();
  for (long round = 0; !stop; ++round) {
    for (size_t i = 0; i < nodes.size() && !stop; ++i) {
      const auto due = start + std::chrono::milliseconds(round * interval_ms +
                                                         interval_ms * static_cast<long>(i) /
                                                             static_cast<long>(nodes.size()));
      while (SimNode* node = woken.take_until(due, stop)) {
        by_wait += measuring ? 1 : 0;
        if (beat_one(*node) > 0) beat_one(*node);
      }
      beat_one(*nodes[i]);
    }
  }
  std::lock_guard lock(stats.mutex);
  stats.beat_ms.insert(stats.beat_ms.end(), mine.begin(), mine.end());
  stats.beats_ok += ok;
  stats.beats_failed += failed;
  stats.beats_woken += by_wait;
}

// Joins nodes [from, to) of `nodes`.
void join(std::vector<SimNode>& nodes, size_t from, size_t to, const std::string& url,
          const std::string& token, std::atomic<long>& failed) {
  auto client = allot::HttpClient::connect_to(url);
  if (!client) return;
  for (size_t n = from; n < to; ++n) {
    json gpus = json::array();
    for (int i = 0; i < kGpus; ++i) {
      gpus.push_back({{"index", i},
                      {"uuid", "GPU-fleet-" + std::to_string(n) + "-" + std::to_string(i)},
                      {"name", "NVIDIA H100 80GB HBM3"},
                      {"model", "H100-80GB"},
                      {"memory_bytes", int64_t{85'899'345'920}}});
    }
    const json body = {{"name", "fleet-" + std::to_string(n)},
                       {"address", "10.0.0.1"},
                       {"cpu_milli", 128'000},
                       {"memory_mib", 1'048'576},
                       {"gpus", gpus},
                       {"runtime", "process"}};
    auto answer = (*client)->send("POST", "/v1/agent/join", body.dump(), token);
    if (!answer || answer->status != 201) {
      ++failed;
      continue;
    }
    const json doc = json::parse(answer->body, nullptr, false);
    nodes[n].id = doc.value("node_id", "");
    nodes[n].credential = doc.value("credential", "");
  }
}

// User and system CPU seconds of process `pid`, and its resident memory in MiB.
std::pair<double, double> cpu_and_rss(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 15 && stat >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  double rss_mib = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) rss_mib = std::stod(line.substr(6)) / 1024;
  }
  return {ticks / static_cast<double>(sysconf(_SC_CLK_TCK)), rss_mib};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a simulated fleet's heartbeats, launches and reads against allotd"};
  std::string url = "http://127.0.0.1:8080", key, token, project;
  int nodes_count = 1000, threads = 8, pid = 0, readers = 1;
  int64_t interval_ms = 2000, seconds = 30, run_s = 10;
  double launch_rate = 20;
  bool long_poll = true;
  app.add_option("--url", url);
  app.add_option("--key", key)->required();
  app.add_option("--join-token", token)->required();
  app.add_option("--project", project)->required();
  app.add_option("--pid", pid)->required();
  app.add_option("--nodes", nodes_count)->check(CLI::Range(1, 100'000));
  app.add_option("--threads", threads)->check(CLI::Range(1, 256));
  app.add_option("--interval-ms", interval_ms)->check(CLI::Range(100, 60'000));
  app.add_option("--seconds", seconds)->check(CLI::Range(1, 3600));
  app.add_option("--run-s", run_s)->check(CLI::Range(1, 3600));
  app.add_option("--launch-rate", launch_rate)->check(CLI::Range(0.0, 10'000.0));
  app.add_option("--readers", readers)->check(CLI::Range(0, 64));
  app.add_option("--long-poll", long_poll);
  CLI11_PARSE(app, argc, argv);

  std::vector<SimNode> nodes(static_cast<size_t>(nodes_count));
  std::atomic<long> join_failed{0};
  const auto join_start = Clock::now();
  {
    std::vector<std::thread> joiners;
    joiners.reserve(static_cast<size_t>(threads));
    const size_t per = (nodes.size() + threads - 1) / threads;
    for (size_t from = 0; from < nodes.size(); from += per) {
      joiners.emplace_back(join, std::ref(nodes), from, std::min(nodes.size(), from + per), url,
                           token, std::ref(join_failed));
    }
    for (auto& joiner : joiners) joiner.join();
  }
  const double join_s = std::chrono::duration<double>(Clock::now() - join_start).count();

  std::atomic<bool> stop{false}, measuring{false};
  Stats stats;
  std::vector<Woken> woken(static_cast<size_t>(threads));
  std::vector<std::thread> beaters;
  beaters.reserve(static_cast<size_t>(threads));
  for (size_t t = 0; t < static_cast<size_t>(threads); ++t) {
    std::vector<SimNode*> mine;
    for (size_t n = t; n < nodes.size(); n += static_cast<size_t>(threads)) {
      nodes[n].beater = t;
      if (!nodes[n].id.empty()) mine.push_back(&nodes[n]);
    }
    beaters.emplace_back(beat, std::move(mine), std::ref(woken[t]), url, interval_ms, run_s * 1000,
                         std::cref(stop), std::cref(measuring), std::ref(stats));
  }
  // One round of heartbeats first: every node is ready, and knows its generation, before its
  // wait and the launches start.
  std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms + 500));
  std::unique_ptr<fleet::Waits> waits;
  if (long_poll) {
    std::vector<fleet::WaitingNode> waiting;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].id.empty()) continue;
      waiting.push_back(fleet::WaitingNode{
          .credential = nodes[n].credential, .generation = &nodes[n].generation, .index = n});
    }
    const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    waits = std::make_unique<fleet::Waits>(
        std::move(waiting), port, [&](size_t n) { woken[nodes[n].beater].add(&nodes[n]); });
    // Every wait parked before the launches start.
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }

  measuring = true;
  const double cpu_before = cpu_and_rss(pid).first;
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  std::vector<std::string> launched;
  long launch_failed = 0;
  std::thread launcher([&] {
    auto client = allot::HttpClient::connect_to(url);
    if (!client || launch_rate <= 0) return;
    const json body = {{"project_id", project}, {"gpus", 1}, {"command", {"sleep", "1"}}};
    for (long n = 0;; ++n) {
      const auto due = start + std::chrono::microseconds(
                                   static_cast<long>(static_cast<double>(n) * 1e6 / launch_rate));
      if (due >= end) break;
      std::this_thread::sleep_until(due);
      auto answer = (*client)->send("POST", "/v1/instances", body.dump(), key);
      if (!answer || answer->status != 201) {
        ++launch_failed;
        continue;
      }
      launched.push_back(json::parse(answer->body, nullptr, false).value("id", ""));
    }
  });
  std::atomic<long> reads{0};
  std::vector<std::thread> reading;
  reading.reserve(static_cast<size_t>(readers));
  for (int r = 0; r < readers; ++r) {
    reading.emplace_back([&] {
      auto client = allot::HttpClient::connect_to(url);
      if (!client) return;
      while (Clock::now() < end) {
        auto answer = (*client)->send("GET", "/v1/instances?limit=100", "", key);
        if (answer && answer->status == 200) ++reads;
      }
    });
  }
  launcher.join();
  for (auto& one : reading) one.join();
  std::this_thread::sleep_until(end);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const auto [cpu_after, rss_after] = cpu_and_rss(pid);
  measuring = false;
  // Work launched near the end reaches its node within a heartbeat or two.
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * interval_ms));
  const long waits_answered = waits ? waits->answered() : 0;
  const long waits_failed = waits ? waits->failed() : 0;
  waits.reset();
  stop = true;
  for (Woken& w : woken) w.wake.notify_all();
  for (auto& beater : beaters) beater.join();

  std::vector<double> launch_ms;
  long never_started = 0;
  auto client = allot::HttpClient::connect_to(url);
  for (const std::string& id : launched) {
    auto answer = client ? (*client)->send("GET", "/v1/instances/" + id, "", key)
                         : allot::Result<allot::ClientResponse>{};
    const json doc = answer ? json::parse(answer->body, nullptr, false) : json();
    const int64_t started = doc.is_object() ? doc.value("started_at_ms", int64_t{0}) : 0;
    if (started == 0) {
      ++never_started;
      continue;
    }
    launch_ms.push_back(static_cast<double>(started - doc.value("created_at_ms", int64_t{0})));
  }
  const json result = {
      {"nodes", nodes_count - join_failed.load()},
      {"join_failed", join_failed.load()},
      {"join_per_s", static_cast<double>(nodes_count) / join_s},
      {"interval_ms", interval_ms},
      {"seconds", elapsed},
      {"heartbeats_per_s", static_cast<double>(stats.beats_ok) / elapsed},
      {"heartbeats_failed", stats.beats_failed},
      {"heartbeats_woken", stats.beats_woken},
      {"long_poll", long_poll},
      {"waits_answered", waits_answered},
      {"waits_failed", waits_failed},
      {"heartbeat_p50_ms", percentile(stats.beat_ms, 0.50)},
      {"heartbeat_p99_ms", percentile(stats.beat_ms, 0.99)},
      {"launched", launched.size()},
      {"launch_failed", launch_failed},
      {"never_started", never_started},
      {"launch_p50_ms", percentile(launch_ms, 0.50)},
      {"launch_p99_ms", percentile(launch_ms, 0.99)},
      {"readers", readers},
      {"reads_per_s", static_cast<double>(reads.load()) / elapsed},
      {"allotd_cores", (cpu_after - cpu_before) / elapsed},
      {"allotd_rss_mib", rss_after},
  };
  std::printf("%s\n", result.dump().c_str());
  return 0;
}
