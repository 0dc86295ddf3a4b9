// What a node agent knows about its GPUs: their inventory once, and telemetry at every tick.
// Two backends: NVML, loaded at run time so that the agent runs where no CUDA is installed, and a
// simulated one for machines without GPUs, deterministic and with injectable faults.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/error.h"

namespace allot::agent {

struct GpuInfo {
  int index = 0;
  std::string uuid;          // "GPU-..." as NVML reports it; simulated ones are stable per node.
  std::string name;          // As the driver names it, e.g. "NVIDIA H200".
  std::string model;         // Allot's catalog name, e.g. "H200-141GB" (see canonical_model).
  int64_t memory_bytes = 0;  // Total memory.
  std::string pci_bus_id;    // e.g. "00000000:18:00.0".
  bool mig_enabled = false;

  bool operator==(const GpuInfo&) const = default;
};

struct GpuSample {
  std::string uuid;
  int utilization_pct = 0;  // 0..100
  // False when the backend could not read it: the agent leaves it out of its heartbeat, and
  // idle stop counts the GPU as busy rather than take a 0 it never read.
  bool utilization_read = true;
  int64_t memory_used_bytes = 0;
  int64_t power_mw = 0;
  int64_t energy_mj = 0;  // Total energy since the backend opened, corrected for counter resets.
  int temperature_c = 0;
  int64_t ecc_errors = 0;  // Uncorrected, volatile.
  bool lost = false;       // The GPU fell off the bus or stopped answering.
  std::vector<int> xids;   // Critical XID events seen since the previous sample.

  bool operator==(const GpuSample&) const = default;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // "nvml" or "simulated".
  virtual std::string_view kind() const = 0;
  // The GPUs, in index order. Stable for the backend's lifetime.
  virtual const std::vector<GpuInfo>& gpus() const = 0;
  // One telemetry reading per GPU, in index order. `now_ms` drives the simulated backend; NVML
  // reads the hardware. Never fails as a whole: a GPU that cannot be read comes back `lost`.
  virtual std::vector<GpuSample> sample(TimeMs now_ms) = 0;
  // The UUIDs of the GPUs that running work holds now, told before each sample. The simulated
  // backend shows those busy and every other GPU idle, as real ones would look; NVML reads the
  // hardware and needs no telling.
  virtual void set_held(const std::set<std::string>& uuids) { (void)uuids; }
};

// Loads libnvidia-ml.so.1 with dlopen, initialises NVML and enumerates GPUs. Fails with
// kUnavailable when the library is missing, NVML will not initialise, or there are no GPUs.
[[nodiscard]] Result<std::unique_ptr<GpuBackend>> open_nvml_backend();

// A simulated node. `spec` is either "COUNTxMODEL" (e.g. "8xH100-80GB") or the path of a file
// listing one MODEL per line (blank lines and '#' comments ignored). `node_seed` makes UUIDs and
// telemetry differ between nodes yet repeat exactly for the same seed. `faults_path`, when not
// empty, is a file re-read at every sample: lines "xid INDEX CODE" and "lost INDEX" make that GPU
// report the event (an XID once per line, once; lost from then on). Unknown models fail with
// kInvalidArgument. A GPU that no work holds (see set_held) reads 0 % utilisation, no memory used
// and its idle power; one that work holds runs a simulated load of 55..100 %. A line
// "util INDEX PCT" makes that GPU report PCT % utilisation (0..100) instead of its simulated load,
// for as long as the line is there: how a test makes work idle or busy.
[[nodiscard]] Result<std::unique_ptr<GpuBackend>> open_simulated_backend(
    std::string_view spec, uint64_t node_seed, std::string faults_path = {});

// Allot's name for a GPU: the family from the driver's name and the memory size, e.g.
// ("NVIDIA H200", 150754820096) -> "H200-141GB", ("NVIDIA H100 80GB HBM3", 85520809984) ->
// "H100-80GB". Returns an empty string for a GPU it does not know.
std::string canonical_model(std::string_view name, int64_t memory_bytes);

// Accumulates a raw energy counter that may restart from zero (driver reload): returns the total
// energy seen so far, never decreasing, counting nothing twice.
class EnergyAccumulator {
 public:
  int64_t add_reading(int64_t raw_mj);

 private:
  bool started_ = false;
  int64_t last_raw_mj_ = 0;
  int64_t total_mj_ = 0;
};

}  // namespace allot::agent
