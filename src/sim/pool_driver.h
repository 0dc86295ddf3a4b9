// The simulator's autoscaler and node provider, as the daemon's (src/daemon/autoscaler.h) but on
// virtual time: every autoscale interval it asks the core what to do (core/pools/autoscale.h) and
// turns each decision into commands; the provider makes a launched node that joins boot_s later
// with the pool's GPUs and shape, using the join token the core was given, and deletes a retired
// node at once. With the forecast on, each hour it adds the hour just ended to every GPU model's
// demand history and grows the pools ahead of the forecast peak.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kernel/command.h"
#include "core/kernel/state.h"
#include "core/pools/autoscale.h"
#include "sim/demand_forecast.h"
#include "sim/scenario.h"

namespace allot::sim {

// A pool node's machine coming up: its join, and the GPUs it brings.
struct PoolJoin {
  JoinNode command;
  ScenarioNode node;
};

class PoolDriver {
 public:
  using NextId = std::function<std::string(std::string_view prefix)>;

  // `forecast` turns pre-scaling on; `predictor` forecasts each model's demand.
  PoolDriver(const Scenario& s, bool forecast, Predictor predictor, NextId next_id);

  // The commands that create the scenario's pools, each named by its place in the scenario.
  std::vector<std::pair<Command, std::string>> setup();

  // The next second after t at which the driver has something to do.
  int64_t next_after(int64_t t) const;

  // The machines whose boot is over at t and whose pool node still waits for them.
  std::vector<PoolJoin> joins_due(const State& state, int64_t t, TimeMs now_ms);

  // At an hour's start: the hour before goes into the history, and the pools' targets follow the
  // forecast. Does nothing with the forecast off.
  Status hour(const State& state, TimeMs now_ms);

  // One autoscaler round, when one is due at t: the decisions' commands, to apply in order.
  std::vector<Command> round(const State& state, int64_t t, TimeMs now_ms);

  // What the forecast did: hours forecast, and the pools' targets' largest values.
  nlohmann::json summary() const;

 private:
  struct Pending {
    std::string pool_node_id;
    int64_t boot_timeout_ms = 0;
  };

  ScaleOptions options() const;
  void launch(const State& state, const ScaleDecision& d, int64_t t, std::vector<Command>& out);
  void set_targets(const State& state, const std::map<std::string, double>& peak_gpus);

  const Scenario& s_;
  bool forecast_;
  Predictor predictor_;
  NextId next_id_;
  std::map<std::string, std::string> pool_ids_;         // name -> id
  std::multimap<int64_t, Pending> joins_;               // At the second each machine is up.
  std::map<std::string, std::vector<double>> history_;  // model -> demand per past hour
  std::map<std::string, int> targets_;                  // pool id -> nodes the forecast wants
  std::map<std::string, int> largest_target_;           // pool name -> its largest target
  int64_t forecasts_ = 0;
};

}  // namespace allot::sim
