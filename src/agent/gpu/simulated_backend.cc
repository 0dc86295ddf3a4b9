// The simulated backend: GPUs from the catalog, with telemetry that is a pure function of the node
// seed, the GPU index and the time, so that a simulation repeats exactly.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/gpu/fault_file.h"
#include "agent/gpu/gpu.h"
#include "common/gpu_catalog.h"

namespace allot::agent {
namespace {

// The largest real nodes hold 8 GPUs (HGX boards); 16 leaves room for denser designs.
constexpr int kMaxSimulatedGpus = 16;
// A spec file lists at most 16 models; 64 KiB is ample with comments.
constexpr size_t kMaxSpecFileBytes = 64 << 10;
// Load changes in steps of this length: long enough to look like a job phase, short enough that
// a test sees several within a simulated minute.
constexpr TimeMs kPhaseMs = 10'000;

// SplitMix64's finaliser: a good 64-bit mix, fixed forever so that seeds keep their meaning.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) { return mix(mix(mix(a) ^ b) ^ c); }

// Shaped like NVML's UUIDs ("GPU-" and 8-4-4-4-12 lowercase hex digits).
std::string make_uuid(uint64_t node_seed, int index) {
  const uint64_t hi = hash3(node_seed, static_cast<uint64_t>(index), 1);
  const uint64_t lo = hash3(node_seed, static_cast<uint64_t>(index), 2);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return text;
}

// NVML's form: an eight-digit domain and upper-case hex. Buses spread out as on real boards.
std::string make_pci_bus_id(int index) {
  char text[32];
  std::snprintf(text, sizeof text, "00000000:%02X:00.0", 0x18 + index * 0x0d);
  return text;
}

// Work that holds a GPU keeps it this busy at the least: a job's phases differ, but a GPU that work
// holds is not idle unless a test says so through the fault file.
constexpr int kMinBusyPct = 55;

// A free GPU sits at 0 % with nothing in its memory and draws its idle power, as a real one does;
// a held one follows a load that changes every phase. Sets the utilisation, memory used, power
// and temperature of `out`.
void set_telemetry(const GpuModelSpec& model, uint64_t node_seed, int index, TimeMs now_ms,
                   bool held, GpuSample& out) {
  // Floor division, so that times before the epoch still fall into whole phases.
  const TimeMs phase = now_ms >= 0 ? now_ms / kPhaseMs : -((-now_ms - 1) / kPhaseMs) - 1;
  const uint64_t h = hash3(node_seed, static_cast<uint64_t>(index), static_cast<uint64_t>(phase));
  out.utilization_pct = held ? kMinBusyPct + static_cast<int>(h % (101 - kMinBusyPct)) : 0;
  out.memory_used_bytes =
      held ? model.memory_bytes / 100 * (5 + out.utilization_pct * 90 / 100) : int64_t{0};
  out.power_mw =
      model.idle_power_mw + (model.max_power_mw - model.idle_power_mw) * out.utilization_pct / 100;
  out.temperature_c = 30 + out.utilization_pct / 2 + static_cast<int>((h >> 32) % 3);
}

Result<const GpuModelSpec*> lookup(std::string_view name, std::string_view where) {
  if (const GpuModelSpec* model = find_gpu_model(name)) return model;
  std::string known;
  for (const GpuModelSpec& model : gpu_catalog()) {
    known += known.empty() ? "" : ", ";
    known += model.model;
  }
  return fail(ErrorCode::kInvalidArgument, std::string(where) + "unknown GPU model \"" +
                                               std::string(name) + "\" (known: " + known + ")");
}

Result<std::vector<const GpuModelSpec*>> parse_count_spec(std::string_view spec) {
  const size_t x = spec.find('x');
  int count = 0;
  const std::string_view text = spec.substr(0, x);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || end != text.data() + text.size() || count < 1 ||
      count > kMaxSimulatedGpus) {
    return fail(ErrorCode::kInvalidArgument, "GPU count in \"" + std::string(spec) +
                                                 "\" must be 1.." +
                                                 std::to_string(kMaxSimulatedGpus));
  }
  auto model = lookup(spec.substr(x + 1), "");
  if (!model) return std::unexpected(model.error());
  return std::vector<const GpuModelSpec*>(static_cast<size_t>(count), *model);
}

Result<std::vector<const GpuModelSpec*>> parse_spec_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::kInvalidArgument,
                "GPU spec \"" + path + "\" is neither COUNTxMODEL nor a readable file");
  }
  std::vector<const GpuModelSpec*> models;
  std::string line;
  size_t total_bytes = 0;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    total_bytes += line.size() + 1;
    if (total_bytes > kMaxSpecFileBytes) {
      return fail(ErrorCode::kInvalidArgument, "GPU spec file " + path + " is too large");
    }
    std::string_view name(line);
    name = name.substr(0, name.find('#'));
    const size_t first = name.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    name = name.substr(first, name.find_last_not_of(" \t\r") - first + 1);
    auto model = lookup(name, path + ":" + std::to_string(line_no) + ": ");
    if (!model) return std::unexpected(model.error());
    models.push_back(*model);
    if (models.size() > kMaxSimulatedGpus) break;
  }
  if (models.empty() || models.size() > kMaxSimulatedGpus) {
    return fail(ErrorCode::kInvalidArgument, "GPU spec file " + path + " must list 1.." +
                                                 std::to_string(kMaxSimulatedGpus) + " GPUs");
  }
  return models;
}

struct SimulatedGpu {
  const GpuModelSpec* model = nullptr;
  bool lost = false;
  bool held = false;  // Running work holds it (set_held).
  bool sampled = false;
  TimeMs last_ms = 0;
  int64_t last_power_mw = 0;
  int64_t energy_uj = 0;  // Kept in µJ (mW × ms) so that no rounding accumulates.
};

class SimulatedBackend final : public GpuBackend {
 public:
  SimulatedBackend(const std::vector<const GpuModelSpec*>& models, uint64_t node_seed,
                   std::string faults_path)
      : node_seed_(node_seed) {
    if (!faults_path.empty()) faults_.emplace(std::move(faults_path));
    for (size_t i = 0; i < models.size(); ++i) {
      const int index = static_cast<int>(i);
      infos_.push_back(GpuInfo{.index = index,
                               .uuid = make_uuid(node_seed, index),
                               .name = std::string(models[i]->driver_name),
                               .model = std::string(models[i]->model),
                               .memory_bytes = models[i]->memory_bytes,
                               .pci_bus_id = make_pci_bus_id(index)});
      gpus_.push_back(SimulatedGpu{.model = models[i]});
    }
  }

  std::string_view kind() const override { return "simulated"; }
  const std::vector<GpuInfo>& gpus() const override { return infos_; }

  void set_held(const std::set<std::string>& uuids) override {
    for (size_t i = 0; i < gpus_.size(); ++i) gpus_[i].held = uuids.contains(infos_[i].uuid);
  }

  std::vector<GpuSample> sample(TimeMs now_ms) override {
    std::vector<GpuSample> samples(gpus_.size());
    for (size_t i = 0; i < gpus_.size(); ++i) samples[i].uuid = infos_[i].uuid;
    Faults faults;
    if (faults_) {
      faults = faults_->poll();
      for (const int index : faults.lost) {
        if (index < static_cast<int>(gpus_.size())) gpus_[static_cast<size_t>(index)].lost = true;
      }
      for (const auto& [index, code] : faults.xids) {
        if (index < static_cast<int>(gpus_.size())) {
          samples[static_cast<size_t>(index)].xids.push_back(code);
        }
      }
    }
    for (size_t i = 0; i < gpus_.size(); ++i) fill(static_cast<int>(i), now_ms, samples[i]);
    // Only the utilisation is overridden: power and energy keep following the simulated load.
    for (const auto& [index, pct] : faults.utilization_pct) {
      const auto at = static_cast<size_t>(index);
      if (at < samples.size() && !samples[at].lost) samples[at].utilization_pct = pct;
    }
    return samples;
  }

 private:
  // Power holds from one sample to the next at the value the earlier sample reported, so the
  // energy is exactly the sum of power_mw × elapsed_ms over the intervals (in µJ, then / 1000).
  void fill(int index, TimeMs now_ms, GpuSample& out) {
    SimulatedGpu& gpu = gpus_[static_cast<size_t>(index)];
    if (gpu.lost) {
      out.lost = true;  // Everything else stays zero: a lost GPU answers nothing.
      return;
    }
    if (gpu.sampled && now_ms > gpu.last_ms) {
      int64_t interval_uj = 0;
      if (__builtin_mul_overflow(gpu.last_power_mw, now_ms - gpu.last_ms, &interval_uj) ||
          __builtin_add_overflow(gpu.energy_uj, interval_uj, &gpu.energy_uj)) {
        gpu.energy_uj = INT64_MAX;  // Only a clock jump of centuries gets here.
      }
    }
    // A clock that steps back adds nothing and does not rewind, so nothing is counted twice.
    gpu.last_ms = gpu.sampled ? std::max(gpu.last_ms, now_ms) : now_ms;
    gpu.sampled = true;
    set_telemetry(*gpu.model, node_seed_, index, now_ms, gpu.held, out);
    gpu.last_power_mw = out.power_mw;
    out.energy_mj = gpu.energy_uj / 1000;
  }

  uint64_t node_seed_;
  std::optional<FaultFile> faults_;
  std::vector<GpuInfo> infos_;
  std::vector<SimulatedGpu> gpus_;
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> open_simulated_backend(std::string_view spec,
                                                           uint64_t node_seed,
                                                           std::string faults_path) {
  if (spec.empty()) return fail(ErrorCode::kInvalidArgument, "GPU spec is empty");
  // "8xH100-80GB" starts with a digit and has an 'x'; anything else is taken for a file path.
  const bool is_count_spec =
      spec.front() >= '0' && spec.front() <= '9' && spec.find('x') != std::string_view::npos;
  auto models = is_count_spec ? parse_count_spec(spec) : parse_spec_file(std::string(spec));
  if (!models) return std::unexpected(models.error());
  auto backend = std::make_unique<SimulatedBackend>(*models, node_seed, std::move(faults_path));
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace allot::agent
