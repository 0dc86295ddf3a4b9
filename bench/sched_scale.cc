// The scheduler at scale: decisions per second on a 10,000-node, 80,000-GPU cluster built from
// the Alibaba spot GPU cluster's inventory (shared/data/spot2026/node_info.csv), with requests
// drawn from the openb trace; and the memory the controller keeps per node and per queued request.
//
//   sched_scale --nodes-csv ../shared/data/spot2026/node_info.csv
//               --pods ../shared/data/openb/pod_list_default.csv [--nodes 10000] [--policy NAME]
//
// Each node copies one row of node_info.csv in turn (its GPU model and CPUs) and has 8 GPUs, so
// the models follow the real cluster's mix. Requests keep the trace's CPU, memory and GPU shape;
// their model constraints are dropped (the two traces name different models). Two phases per
// policy: fill (place until 90 % of GPU milli is allocated or a request fits nowhere 100 times
// in a row) and churn (release a random placed request, place a new one, 20,000 times), each
// reported as decisions per second on one core. One JSON line per policy.
#include <malloc.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/random.h"
#include "core/core.h"
#include "sched/sched.h"
#include "sim/replay.h"
#include "sim/trace.h"

namespace {

using allot::sched::NodeView;
using allot::sched::Request;
using Clock = std::chrono::steady_clock;

struct InventoryRow {
  std::string model;
  int64_t cpus = 0;
};

std::vector<InventoryRow> read_inventory(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::getline(in, line);
  if (line.rfind("gpu_model,gpu_capacity_num,cpu_num", 0) != 0) {
    throw std::runtime_error(path + ":1: expected gpu_model,gpu_capacity_num,cpu_num,node_name");
  }
  std::vector<InventoryRow> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    std::stringstream fields(line);
    std::string model, capacity, cpus;
    if (!std::getline(fields, model, ',') || !std::getline(fields, capacity, ',') ||
        !std::getline(fields, cpus, ',')) {
      throw std::runtime_error(fmt::format("{}:{}: too few fields", path, n));
    }
    rows.push_back({model, std::stoll(cpus)});
  }
  if (rows.empty()) throw std::runtime_error(path + ": no nodes");
  return rows;
}

std::vector<NodeView> build_cluster(const std::vector<InventoryRow>& rows, size_t count) {
  std::vector<NodeView> nodes;
  nodes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const InventoryRow& row = rows[i % rows.size()];
    NodeView node{.id = fmt::format("n{}", i),
                  .cpu_milli = row.cpus * 1000,
                  .memory_mib = row.cpus * 8 * 1024,
                  .free_cpu_milli = row.cpus * 1000,
                  .free_memory_mib = row.cpus * 8 * 1024};
    for (int g = 0; g < 8; ++g) node.gpus.push_back({.index = g, .model = row.model});
    nodes.push_back(std::move(node));
  }
  return nodes;
}

size_t heap_bytes() { return mallinfo2().uordblks; }

struct Phase {
  size_t decisions = 0;
  size_t placed = 0;
  double seconds = 0;
};

nlohmann::json run_policy(const std::string& name, const std::vector<NodeView>& nodes,
                          const std::vector<Request>& trace, uint64_t seed) {
  auto policy = allot::sched::make_policy(name);
  if (!policy) throw std::runtime_error(policy.error().message);
  std::mt19937_64 rng(seed);
  int64_t capacity = 0;
  for (const NodeView& n : nodes) capacity += 1000 * static_cast<int64_t>(n.gpus.size());
  const size_t before = heap_bytes();
  allot::sched::Placer placer(**policy, allot::sched::typical_shapes(trace), nodes);
  std::vector<std::pair<Request, allot::sched::Choice>> placed;
  auto next = [&]() -> const Request& { return trace[allot::sim::draw_below(rng, trace.size())]; };
  std::string why;
  Phase fill;
  int64_t allocated = 0;
  const auto fill_start = Clock::now();
  for (int misses = 0; allocated * 10 < capacity * 9 && misses < 100;) {
    const Request& request = next();
    ++fill.decisions;
    auto choice = placer.place(request, why);
    if (!choice) {
      ++misses;
      continue;
    }
    misses = 0;
    placer.allocate(request, *choice);
    allocated += allot::sim::gpu_milli_of(request);
    placed.emplace_back(request, std::move(*choice));
    ++fill.placed;
  }
  fill.seconds = std::chrono::duration<double>(Clock::now() - fill_start).count();
  const size_t placer_bytes = heap_bytes() - before;
  Phase churn;
  const auto churn_start = Clock::now();
  for (int i = 0; i < 20'000 && !placed.empty(); ++i) {
    const size_t victim = allot::sim::draw_below(rng, placed.size());
    placer.release(placed[victim].first, placed[victim].second);
    allocated -= allot::sim::gpu_milli_of(placed[victim].first);
    placed[victim] = placed.back();
    placed.pop_back();
    const Request& request = next();
    ++churn.decisions;
    if (auto choice = placer.place(request, why)) {
      placer.allocate(request, *choice);
      allocated += allot::sim::gpu_milli_of(request);
      placed.emplace_back(request, std::move(*choice));
      ++churn.placed;
    }
  }
  churn.seconds = std::chrono::duration<double>(Clock::now() - churn_start).count();
  auto rate = [](const Phase& p) {
    return p.seconds > 0 ? std::round(static_cast<double>(p.decisions) / p.seconds) : 0.0;
  };
  return {{"policy", name},
          {"nodes", nodes.size()},
          {"gpus", capacity / 1000},
          {"fill",
           {{"decisions", fill.decisions},
            {"placed", fill.placed},
            {"seconds", fill.seconds},
            {"decisions_per_s", rate(fill)}}},
          {"churn",
           {{"decisions", churn.decisions},
            {"placed", churn.placed},
            {"seconds", churn.seconds},
            {"decisions_per_s", rate(churn)}}},
          {"allocated_pct", 100.0 * static_cast<double>(allocated) / static_cast<double>(capacity)},
          {"placer_bytes_per_node", placer_bytes / nodes.size()}};
}

// What the controller's core keeps: a node of 8 GPUs, and a request waiting in the queue.
nlohmann::json core_memory(size_t node_count, size_t queued) {
  allot::Core core;
  const std::string token = std::string(64, 'a');
  auto ok = [&](const allot::Command& command) {
    auto rows = core.apply(command, 1'800'000'000'000);
    if (!rows) throw std::runtime_error(rows.error().message);
  };
  ok(allot::CreateTenant{"ten_0000000000000001", "bench"});
  ok(allot::CreateProject{"prj_0000000000000001", "ten_0000000000000001", "p"});
  ok(allot::CreateJoinToken{"jtk_0000000000000001", "all", token, 0});
  // Work is taken only where a price covers it.
  ok(allot::SetPrice{
      {.key = {.model = "H100-80GB", .region = "eu"}, .gpu_hour_micros = 2'500'000}});
  const size_t start = heap_bytes();
  for (size_t i = 0; i < node_count; ++i) {
    allot::JoinNode join{.node_id = fmt::format("nod_{:016x}", i + 1),
                         .join_token_hash = token,
                         .credential_hash = allot::sha256_hex(std::to_string(i)),
                         .name = fmt::format("node-{}", i),
                         .region = "eu",
                         .cpu_milli = 128'000,
                         .memory_mib = 1'048'576};
    for (int g = 0; g < 8; ++g) {
      join.gpus.push_back({.index = g,
                           .uuid = fmt::format("GPU-{:08x}-{}", i, g),
                           .name = "NVIDIA H100 80GB HBM3",
                           .model = "H100-80GB",
                           .memory_bytes = 85'520'809'984,
                           .pci_bus_id = fmt::format("00000000:{:02X}:00.0", g)});
    }
    ok(join);
  }
  const size_t after_nodes = heap_bytes();
  // The nodes never heartbeat, so nothing is placed and every request stays queued.
  for (size_t i = 0; i < queued; ++i) {
    ok(allot::CreateInstance{.id = fmt::format("ins_{:016x}", i + 1),
                             .tenant_id = "ten_0000000000000001",
                             .project_id = "prj_0000000000000001",
                             .user_id = "usr_0000000000000001",
                             .spec = {.gpus = 1,
                                      .cpu_milli = 8'000,
                                      .memory_mib = 65'536,
                                      .command = {"python3", "train.py", "--epochs", "10"}}});
  }
  const size_t after_queue = heap_bytes();
  return {{"core_bytes_per_node", (after_nodes - start) / node_count},
          {"core_bytes_per_queued_request", (after_queue - after_nodes) / queued}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("scheduler decisions per second and memory at scale");
  std::string nodes_csv, pods_csv;
  size_t node_count = 10'000;
  std::vector<std::string> policies;
  uint64_t seed = 42;
  app.add_option("--nodes-csv", nodes_csv, "spot2026 node_info.csv")->required();
  app.add_option("--pods", pods_csv, "an openb pod list")->required();
  app.add_option("--nodes", node_count, "cluster size")->check(CLI::PositiveNumber);
  app.add_option("--policy", policies, "policies (default: all)");
  app.add_option("--seed", seed, "random seed");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<NodeView> nodes = build_cluster(read_inventory(nodes_csv), node_count);
    // The pod list names models of its own trace's nodes, which lie beside it.
    const std::string openb_nodes =
        (std::filesystem::path(pods_csv).parent_path() / "node_list_gpu_node.csv").string();
    auto known = allot::sim::read_nodes(openb_nodes);
    if (!known) throw std::runtime_error(known.error().message);
    auto pods = allot::sim::read_pods(pods_csv, allot::sim::models_of(*known));
    if (!pods) throw std::runtime_error(pods.error().message);
    std::vector<Request> trace;
    for (Request r : *pods) {
      r.models.clear();
      if (r.gpus > 0 || r.gpu_milli > 0) trace.push_back(std::move(r));
    }
    if (policies.empty()) {
      for (std::string_view p : allot::sched::policy_names()) policies.emplace_back(p);
    }
    for (const std::string& policy : policies) {
      std::cout << run_policy(policy, nodes, trace, seed).dump() << "\n" << std::flush;
    }
    std::cout << core_memory(node_count, 2'000).dump() << "\n" << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "sched_scale: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
