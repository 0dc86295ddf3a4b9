#include "sim/gpu_meter.h"

namespace allot::sim {

void GpuMeters::add_node(const std::string& node_id, int gpus, int64_t idle_w, int64_t busy_w) {
  Meter meter{.idle_w = idle_w, .busy_w = busy_w, .gpus = {}};
  meter.gpus.assign(static_cast<size_t>(gpus), Gpu{.energy_mj = 0, .draw_w = idle_w});
  nodes_[node_id] = std::move(meter);
}

void GpuMeters::advance(TimeMs at_ms) {
  if (at_ms <= at_ms_) return;
  const int64_t elapsed_ms = at_ms - at_ms_;
  for (auto& [id, meter] : nodes_) {
    for (Gpu& gpu : meter.gpus) gpu.energy_mj += gpu.draw_w * elapsed_ms;
  }
  at_ms_ = at_ms;
}

void GpuMeters::remove_node(const std::string& node_id) { nodes_.erase(node_id); }

void GpuMeters::set_draw(const State& state, const std::set<std::string>& down,
                         const std::set<std::string>& candidates) {
  std::map<std::string, std::set<int>> busy;
  for (const std::string& id : candidates) {
    const Instance& instance = *state.instance(id);
    if (instance.state != InstanceState::kRunning) continue;
    busy[instance.node_id].insert(instance.gpu_indices.begin(), instance.gpu_indices.end());
  }
  for (auto& [id, meter] : nodes_) {
    const bool is_down = down.contains(id);
    const std::set<int>& held = busy[id];
    for (size_t i = 0; i < meter.gpus.size(); ++i) {
      const bool is_busy = held.contains(static_cast<int>(i));
      meter.gpus[i].draw_w = is_down ? 0 : (is_busy ? meter.busy_w : meter.idle_w);
    }
  }
}

std::vector<GpuHeartbeat> GpuMeters::readings(const std::string& node_id) const {
  std::vector<GpuHeartbeat> out;
  const Meter& meter = nodes_.at(node_id);
  out.reserve(meter.gpus.size());
  for (size_t i = 0; i < meter.gpus.size(); ++i) {
    out.push_back(GpuHeartbeat{
        .index = static_cast<int>(i),
        .telemetry = {.power_mw = meter.gpus[i].draw_w * 1000,
                      .energy_mj = meter.gpus[i].energy_mj},
    });
  }
  return out;
}

}  // namespace allot::sim
