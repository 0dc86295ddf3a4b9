// The world `allot sim chaos` drives: tenants, nodes with agents that report (or go quiet and come
// back), and what operators and tenants do, all drawn from one seeded generator, so that a seed
// replays the same commands.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/kernel/command.h"
#include "core/kernel/state.h"

namespace allot::sim {

// One step's commands and what it stands for ("launch", "node_fails", ...).
struct ChaosStep {
  std::string action;
  std::vector<Command> commands;
};

class ChaosWorld {
 public:
  ChaosWorld(uint64_t seed, TimeMs start_ms);

  // The commands that set the cloud up: tenants, projects, a join token, nodes, prices, a pool.
  ChaosStep setup();
  // The next step at the state as it stands; moves the clock first.
  ChaosStep next(const State& state);

  TimeMs now_ms() const { return now_ms_; }

 private:
  struct Agent {
    std::string node_id;
    std::string name;
    std::string model;
    std::string region;
    int gpus = 0;
    bool up = true;
    int64_t energy_mj = 0;
    int restarts = 0;
  };

  uint64_t draw(uint64_t bound) { return rng_() % bound; }
  bool chance(int percent) { return draw(100) < static_cast<uint64_t>(percent); }
  std::string next_id(std::string_view prefix);
  std::string tenant() { return tenants_[draw(tenants_.size())]; }

  // What the agents send: a heartbeat from each live agent whose last one is older than `due_ms`.
  void heartbeats(const State& state, TimeMs due_ms, std::vector<Command>& out);
  NodeHeartbeat heartbeat(const State& state, Agent& agent);
  JoinNode join(const Agent& agent, const std::string& token_hash);

  ChaosStep launch();
  ChaosStep stop(const State& state);
  ChaosStep money();
  ChaosStep price();
  ChaosStep spot_rule();
  ChaosStep node_fails();
  ChaosStep node_returns(const State& state);
  ChaosStep node_admin();
  ChaosStep limits(const State& state);
  ChaosStep idle_policy();
  ChaosStep month_end();
  ChaosStep autoscale(const State& state);

  std::mt19937_64 rng_;
  TimeMs now_ms_;
  uint64_t next_ = 0;
  std::string token_hash_;
  std::vector<std::string> tenants_;
  std::map<std::string, std::string> project_of_;  // tenant -> project
  std::vector<Agent> agents_;
  std::map<std::string, std::string> pool_tokens_;  // pool node -> its join token's hash
  std::string pool_id_;
};

}  // namespace allot::sim
