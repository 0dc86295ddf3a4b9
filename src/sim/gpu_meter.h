// The simulated GPUs' energy counters. Each GPU draws its idle power, or its busy power while a
// running instance holds any of it, and nothing while its node is down; its counter is the exact
// integral, watts x milliseconds = millijoules, so an instance's energy can be worked out by hand.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/kernel/command.h"
#include "core/kernel/state.h"

namespace allot::sim {

class GpuMeters {
 public:
  void add_node(const std::string& node_id, int gpus, int64_t idle_w, int64_t busy_w);

  // Counts every GPU's energy up to `at_ms` at the draw set last; earlier moments change nothing.
  void advance(TimeMs at_ms);

  // A node whose machine is gone: its counters are no longer read.
  void remove_node(const std::string& node_id);

  // What each GPU draws from the moment counted to on: busy where an instance the core has
  // running holds it, idle otherwise, nothing on the nodes in `down`. Only the instances in
  // `candidates` are looked at: every instance that may be running must be among them.
  void set_draw(const State& state, const std::set<std::string>& down,
                const std::set<std::string>& candidates);

  // The node's GPUs' counters, as its heartbeat reports them.
  std::vector<GpuHeartbeat> readings(const std::string& node_id) const;

 private:
  struct Gpu {
    int64_t energy_mj = 0;
    int64_t draw_w = 0;
  };
  struct Meter {
    int64_t idle_w = 0;
    int64_t busy_w = 0;
    std::vector<Gpu> gpus;
  };

  std::map<std::string, Meter> nodes_;  // By node id.
  TimeMs at_ms_ = 0;
};

}  // namespace allot::sim
