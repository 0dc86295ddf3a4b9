// Energy and carbon from the GPUs' energy counters (see books.h). The counter, not integrated
// power, is the measure: on a real H200 integrating power samples read 3.5 % low.
#include <map>
#include <optional>
#include <vector>

#include "common/int128.h"
#include "core/books/books.h"
#include "finance/schedule.h"

namespace allot {
namespace {

constexpr TimeMs kHourMs = 3'600'000;
constexpr TimeMs kDayMs = 24 * kHourMs;

// The instances running on GPU `index`, among the node's running ones, with their milli.
void occupants(const Draft& draft, const std::vector<std::string>& running, int index,
               std::vector<std::string>& ids, std::vector<int64_t>& milli) {
  ids.clear();
  milli.clear();
  for (const std::string& id : running) {
    const Instance& instance = *draft.instance(id);
    for (int gpu : instance.gpu_indices) {
      if (gpu != index) continue;
      ids.push_back(id);
      milli.push_back(instance.milli_per_gpu());
    }
  }
}

// The node's instances running before this heartbeat: looked up once, not once per GPU.
std::vector<std::string> running_on(const Draft& draft, const std::string& node_id) {
  std::vector<std::string> out;
  for (const std::string& id : draft.instances_on(node_id)) {
    if (draft.instance(id)->state == InstanceState::kRunning) out.push_back(id);
  }
  return out;
}

}  // namespace

int64_t carbon_ug(int64_t energy_mj, int64_t pue_milli, int64_t g_per_kwh) {
  // µg = mJ / 3.6e9 (kWh) x pue_milli / 1,000 x g/kWh x 1e6 (µg/g) = mJ x pue_milli x g / 3.6e6.
  const Int128 product = Int128{energy_mj} * pue_milli * g_per_kwh;
  return static_cast<int64_t>(product / 3'600'000);
}

void meter_energy(Draft& draft, const NodeHeartbeat& beat, TimeMs now_ms) {
  const Node& before = *draft.node(beat.node_id);
  const Site* site = draft.base().books.site(before.region);
  const int64_t pue_milli = site != nullptr ? site->pue_milli : 1000;
  const int64_t g_per_kwh = site != nullptr ? value_at(site->carbon_g_per_kwh, now_ms) : 0;
  const TimeMs day_ms = now_ms - (now_ms % kDayMs);
  int64_t node_mj = 0;
  std::vector<std::string> ids;
  std::vector<int64_t> milli;
  std::optional<std::vector<std::string>> running;  // Looked up at the first GPU that used energy.
  for (const GpuHeartbeat& gpu_beat : beat.gpus) {
    if (gpu_beat.index < 0 || static_cast<size_t>(gpu_beat.index) >= before.gpus.size()) continue;
    const int64_t last = before.gpus[static_cast<size_t>(gpu_beat.index)].telemetry.energy_mj;
    const int64_t reading = gpu_beat.telemetry.energy_mj;
    if (reading < 0) continue;
    // A lower reading: the agent restarted and counts from zero again, all of it new energy.
    const int64_t delta = reading >= last ? reading - last : reading;
    if (delta == 0) continue;
    node_mj += delta;
    if (!running) running = running_on(draft, beat.node_id);
    occupants(draft, *running, gpu_beat.index, ids, milli);
    const std::vector<int64_t> shares = finance::allocate(delta, milli);
    for (size_t i = 0; i < ids.size(); ++i) {
      EnergyUse& use = draft.edit_instance(ids[i]).energy[day_ms];
      use.energy_mj += shares[i];
      use.carbon_ug += carbon_ug(shares[i], pue_milli, g_per_kwh);
    }
  }
  if (node_mj == 0) return;
  const TimeMs hour_ms = now_ms - (now_ms % kHourMs);
  int64_t total = node_mj;
  const auto& energy = draft.base().books.energy;
  if (auto node = energy.find(beat.node_id); node != energy.end()) {
    if (auto hour = node->second.find(hour_ms); hour != node->second.end()) total += hour->second;
  }
  draft.add_row(NodeEnergy{.node_id = beat.node_id, .hour_ms = hour_ms, .energy_mj = total});
}

}  // namespace allot
