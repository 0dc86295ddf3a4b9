// The NVML backend. NVML is loaded with dlopen so that one agent binary runs on GPU nodes and on
// machines without any NVIDIA software; every entry point is resolved by its versioned name.
#include "agent/gpu/nvml_backend.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "agent/gpu/nvml_api.h"

namespace allot::agent {
namespace {

// Events are drained at each sample; a GPU in trouble can raise a burst of XIDs, and this bound
// keeps one sample's work finite while leaving the rest for the next sample.
constexpr int kMaxEventsPerSample = 256;

std::string from_buffer(const char* buffer, size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

struct NvmlGpu {
  nvml::Device device = nullptr;
  bool lost = false;
  EnergyAccumulator energy;
  int64_t energy_mj = 0;  // The last total, kept when a reading fails.
  std::vector<int> xids;  // Drained from the event set, not yet reported.
};

// Not thread-safe: one caller samples, as the agent's tick loop does.
class NvmlBackend final : public GpuBackend {
 public:
  // Takes the loaded library and an initialised NVML; releases both when destroyed.
  NvmlBackend(void* library, nvml::Api api, std::string library_name)
      : library_(library), api_(api), library_name_(std::move(library_name)) {}
  NvmlBackend(const NvmlBackend&) = delete;
  NvmlBackend& operator=(const NvmlBackend&) = delete;
  ~NvmlBackend() override {
    if (events_ != nullptr) api_.event_set_free(events_);
    api_.shutdown();
    dlclose(library_);
  }

  std::string_view kind() const override { return "nvml"; }
  const std::vector<GpuInfo>& gpus() const override { return infos_; }

  Status enumerate();
  std::vector<GpuSample> sample(TimeMs now_ms) override;

 private:
  Error failure(const std::string& what, nvml::Return code) const {
    return Error{ErrorCode::kUnavailable,
                 library_name_ + ": " + what + ": " + nvml::error_text(api_, code)};
  }
  Status describe(int index, nvml::Device device);
  void open_events();
  void drain_events();
  // Marks the GPU lost when NVML says it is; true when the call succeeded.
  bool ok(NvmlGpu& gpu, nvml::Return code) {
    if (code == nvml::kErrorGpuIsLost) gpu.lost = true;
    return code == nvml::kSuccess;
  }
  GpuSample read(NvmlGpu& gpu);

  void* library_;
  nvml::Api api_;
  std::string library_name_;
  nvml::EventSet events_ = nullptr;
  std::vector<GpuInfo> infos_;
  std::vector<NvmlGpu> gpus_;
};

Status NvmlBackend::enumerate() {
  unsigned int count = 0;
  if (const nvml::Return r = api_.get_count(&count); r != nvml::kSuccess) {
    return std::unexpected(failure("nvmlDeviceGetCount_v2", r));
  }
  if (count == 0) return fail(ErrorCode::kUnavailable, library_name_ + ": NVML sees no GPUs");
  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device device = nullptr;
    if (const nvml::Return r = api_.get_handle(i, &device); r != nvml::kSuccess) {
      return std::unexpected(failure("GPU " + std::to_string(i) + ": get handle", r));
    }
    if (auto described = describe(static_cast<int>(i), device); !described) return described;
  }
  open_events();
  // The first energy reading is the baseline: energy counts from when the backend opened.
  for (NvmlGpu& gpu : gpus_) {
    unsigned long long raw_mj = 0;
    if (ok(gpu, api_.get_energy(gpu.device, &raw_mj))) {
      gpu.energy.add_reading(static_cast<int64_t>(raw_mj));
    }
  }
  return {};
}

Status NvmlBackend::describe(int index, nvml::Device device) {
  const std::string gpu = "GPU " + std::to_string(index) + ": ";
  GpuInfo info{.index = index};
  char name[nvml::kNameBufferSize] = {};
  if (const nvml::Return r = api_.get_name(device, name, sizeof name); r != nvml::kSuccess) {
    return std::unexpected(failure(gpu + "nvmlDeviceGetName", r));
  }
  info.name = from_buffer(name, sizeof name);
  char uuid[nvml::kUuidBufferSize] = {};
  if (const nvml::Return r = api_.get_uuid(device, uuid, sizeof uuid); r != nvml::kSuccess) {
    return std::unexpected(failure(gpu + "nvmlDeviceGetUUID", r));
  }
  info.uuid = from_buffer(uuid, sizeof uuid);
  nvml::Memory memory = {};
  if (const nvml::Return r = api_.get_memory(device, &memory); r != nvml::kSuccess) {
    return std::unexpected(failure(gpu + "nvmlDeviceGetMemoryInfo", r));
  }
  info.memory_bytes = static_cast<int64_t>(memory.total);
  info.model = canonical_model(info.name, info.memory_bytes);
  nvml::PciInfo pci = {};
  if (const nvml::Return r = api_.get_pci_info(device, &pci); r != nvml::kSuccess) {
    return std::unexpected(failure(gpu + "nvmlDeviceGetPciInfo", r));
  }
  if (api_.pci_info_v3) {
    info.pci_bus_id = from_buffer(pci.busId, sizeof pci.busId);
  } else {
    // _v2 writes only the legacy four-digit-domain id; build _v3's form from the numbers.
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%08X:%02X:%02X.0", pci.domain, pci.bus, pci.device);
    info.pci_bus_id = bus_id;
  }
  unsigned int current = 0;
  unsigned int pending = 0;
  // NOT_SUPPORTED (GPUs without MIG) and any other failure both mean MIG is not in use.
  info.mig_enabled = api_.get_mig_mode != nullptr &&
                     api_.get_mig_mode(device, &current, &pending) == nvml::kSuccess &&
                     current == nvml::kMigEnabled;
  infos_.push_back(std::move(info));
  gpus_.push_back(NvmlGpu{.device = device});
  return {};
}

// Without events the agent still has telemetry; XIDs then simply are not reported.
void NvmlBackend::open_events() {
  if (api_.event_set_create == nullptr || api_.event_set_create(&events_) != nvml::kSuccess) {
    events_ = nullptr;
    return;
  }
  for (NvmlGpu& gpu : gpus_) {
    (void)api_.register_events(gpu.device, nvml::kEventTypeXidCriticalError, events_);
  }
}

void NvmlBackend::drain_events() {
  if (events_ == nullptr) return;
  for (int i = 0; i < kMaxEventsPerSample; ++i) {
    nvml::EventData event = {};
    // Timeout 0: take what is pending and never block the tick (kErrorTimeout when none is).
    if (api_.event_set_wait(events_, &event, 0) != nvml::kSuccess) return;
    if ((event.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (NvmlGpu& gpu : gpus_) {
      if (gpu.device == event.device) gpu.xids.push_back(static_cast<int>(event.eventData));
    }
  }
}

GpuSample NvmlBackend::read(NvmlGpu& gpu) {
  GpuSample s;
  nvml::Utilization utilization = {};
  if (ok(gpu, api_.get_utilization(gpu.device, &utilization))) {
    s.utilization_pct = static_cast<int>(utilization.gpu);
  } else {
    s.utilization_read = false;
  }
  nvml::Memory memory = {};
  if (ok(gpu, api_.get_memory(gpu.device, &memory))) {
    s.memory_used_bytes = static_cast<int64_t>(memory.used);
  }
  unsigned int power_mw = 0;
  if (ok(gpu, api_.get_power(gpu.device, &power_mw))) s.power_mw = power_mw;
  // Read once per sample: the call costs about 4 ms (shared/gpu.md).
  unsigned long long raw_mj = 0;
  if (ok(gpu, api_.get_energy(gpu.device, &raw_mj))) {
    gpu.energy_mj = gpu.energy.add_reading(static_cast<int64_t>(raw_mj));
  }
  s.energy_mj = gpu.energy_mj;
  unsigned int temperature_c = 0;
  if (ok(gpu, api_.get_temperature(gpu.device, nvml::kTemperatureGpu, &temperature_c))) {
    s.temperature_c = static_cast<int>(temperature_c);
  }
  unsigned long long ecc = 0;
  // NOT_SUPPORTED (no ECC on the board) leaves the count at 0.
  if (ok(gpu, api_.get_ecc(gpu.device, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &ecc))) {
    s.ecc_errors = static_cast<int64_t>(ecc);
  }
  return s;
}

std::vector<GpuSample> NvmlBackend::sample(TimeMs /*now_ms*/) {
  drain_events();
  std::vector<GpuSample> samples;
  samples.reserve(gpus_.size());
  for (size_t i = 0; i < gpus_.size(); ++i) {
    NvmlGpu& gpu = gpus_[i];
    // A lost GPU stays lost: NVML does not get it back without a reset and a driver reload.
    GpuSample s;
    if (!gpu.lost) s = read(gpu);
    // A GPU found lost during this very read reports zeros too, like one lost before.
    if (gpu.lost) s = GpuSample{.lost = true};
    s.uuid = infos_[i].uuid;
    s.xids = std::move(gpu.xids);
    gpu.xids.clear();
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace

Result<std::unique_ptr<GpuBackend>> open_nvml_backend_at(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(ErrorCode::kUnavailable, "cannot load " + library + " (no NVIDIA driver here?): " +
                                             (why != nullptr ? why : "unknown error"));
  }
  auto api = nvml::resolve_api(handle, library);
  if (!api) {
    dlclose(handle);
    return std::unexpected(api.error());
  }
  if (const nvml::Return r = api->init(); r != nvml::kSuccess) {
    std::string message = library + ": NVML did not initialise: " + nvml::error_text(*api, r);
    dlclose(handle);
    return fail(ErrorCode::kUnavailable, std::move(message));
  }
  auto backend = std::make_unique<NvmlBackend>(handle, *api, library);
  if (auto enumerated = backend->enumerate(); !enumerated) {
    return std::unexpected(enumerated.error());
  }
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

Result<std::unique_ptr<GpuBackend>> open_nvml_backend() {
  return open_nvml_backend_at("libnvidia-ml.so.1");
}

}  // namespace allot::agent
