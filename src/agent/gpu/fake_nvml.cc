// The fake libnvidia-ml (see fake_nvml.h). Built as a loadable module for gpu_tests only.
#include "agent/gpu/fake_nvml.h"

#include <cstdio>

#include "agent/gpu/nvml_api.h"

namespace {

using allot::agent::fake::Gpu;
using allot::agent::fake::State;
namespace nvml = allot::agent::nvml;

State& state() {
  static State instance;
  return instance;
}

// Device handles point into this array, one byte per GPU: never dereferenced, only compared.
char handles[64];

nvml::Device handle_of(size_t index) { return reinterpret_cast<nvml::Device>(&handles[index]); }

Gpu* gpu_of(nvml::Device device) {
  const char* handle = reinterpret_cast<const char*>(device);
  if (handle < handles || handle >= handles + state().gpus.size()) return nullptr;
  return &state().gpus[static_cast<size_t>(handle - handles)];
}

// The common prologue of every device call: INVALID_ARGUMENT (2) for a bad handle, GPU_IS_LOST
// for a lost GPU, else success.
nvml::Return check(Gpu* gpu) {
  if (gpu == nullptr) return 2;
  return gpu->lost ? nvml::kErrorGpuIsLost : nvml::kSuccess;
}

nvml::Return copy_string(const std::string& text, char* out, unsigned int length) {
  if (text.size() + 1 > length) return 7;  // INSUFFICIENT_SIZE
  std::snprintf(out, length, "%s", text.c_str());
  return nvml::kSuccess;
}

}  // namespace

extern "C" {

State* fake_nvml_state() { return &state(); }

nvml::Return nvmlInit_v2() { return state().init_result; }
nvml::Return nvmlShutdown() {
  ++state().shutdowns;
  return nvml::kSuccess;
}
const char* nvmlErrorString(nvml::Return code) {
  return code == nvml::kErrorGpuIsLost ? "GPU is lost" : "fake NVML error";
}
nvml::Return nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = static_cast<unsigned int>(state().gpus.size());
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml::Device* device) {
  if (index >= state().gpus.size() || index >= sizeof handles) return 2;
  *device = handle_of(index);
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetPciInfo_v3(nvml::Device device, nvml::PciInfo* pci) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  return copy_string(gpu->bus_id, pci->busId, sizeof pci->busId);
}
nvml::Return nvmlDeviceGetName(nvml::Device device, char* name, unsigned int length) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  return copy_string(gpu->name, name, length);
}
nvml::Return nvmlDeviceGetUUID(nvml::Device device, char* uuid, unsigned int length) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  return copy_string(gpu->uuid, uuid, length);
}
nvml::Return nvmlDeviceGetMemoryInfo(nvml::Device device, nvml::Memory* memory) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  *memory = {gpu->memory_total, gpu->memory_total - gpu->memory_used, gpu->memory_used};
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetMigMode(nvml::Device device, unsigned int* current,
                                  unsigned int* pending) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  *current = *pending = gpu->mig_mode;
  return gpu->mig_result;
}
nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device device, nvml::Utilization* rates) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  *rates = {gpu->utilization_pct, 0};
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetPowerUsage(nvml::Device device, unsigned int* power_mw) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  *power_mw = gpu->power_mw;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetTotalEnergyConsumption(nvml::Device device, unsigned long long* mj) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  ++state().energy_calls;
  *mj = gpu->energy_mj;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetTemperature(nvml::Device device, unsigned sensor, unsigned int* temp) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  if (sensor != nvml::kTemperatureGpu) return 2;
  *temp = gpu->temperature_c;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetTotalEccErrors(nvml::Device device, unsigned error_type,
                                         unsigned counter_type, unsigned long long* count) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  if (error_type != nvml::kMemoryErrorUncorrected || counter_type != nvml::kVolatileEcc) return 2;
  *count = gpu->ecc_errors;
  return gpu->ecc_result;
}
nvml::Return nvmlEventSetCreate(nvml::EventSet* set) {
  *set = reinterpret_cast<nvml::EventSet>(&state());
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceRegisterEvents(nvml::Device device, unsigned long long types,
                                      nvml::EventSet /*set*/) {
  Gpu* gpu = gpu_of(device);
  if (const nvml::Return r = check(gpu); r != nvml::kSuccess) return r;
  gpu->xids_registered = (types & nvml::kEventTypeXidCriticalError) != 0;
  return nvml::kSuccess;
}
nvml::Return nvmlEventSetWait_v2(nvml::EventSet /*set*/, nvml::EventData* data,
                                 unsigned int /*timeout_ms*/) {
  auto& events = state().events;
  if (events.empty()) return nvml::kErrorTimeout;
  const auto event = events.front();
  events.erase(events.begin());
  *data = {.device = handle_of(static_cast<size_t>(event.gpu)),
           .eventType = event.type,
           .eventData = event.data};
  return nvml::kSuccess;
}
nvml::Return nvmlEventSetFree(nvml::EventSet /*set*/) { return nvml::kSuccess; }

}  // extern "C"
