#include "agent/gpu/nvml_api.h"

#include <dlfcn.h>

namespace allot::agent::nvml {

namespace {

template <typename Fn>
bool resolve(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

}  // namespace

Result<Api> resolve_api(void* library, const std::string& library_name) {
  Api api;
  const char* missing = nullptr;
  auto require = [&](const char* name, auto& fn) {
    if (!resolve(library, name, fn) && missing == nullptr) missing = name;
  };
  require("nvmlInit_v2", api.init);
  require("nvmlShutdown", api.shutdown);
  require("nvmlErrorString", api.error_string);
  require("nvmlDeviceGetCount_v2", api.get_count);
  require("nvmlDeviceGetHandleByIndex_v2", api.get_handle);
  if (!resolve(library, "nvmlDeviceGetPciInfo_v3", api.get_pci_info)) {
    api.pci_info_v3 = false;
    require("nvmlDeviceGetPciInfo_v2", api.get_pci_info);
  }
  require("nvmlDeviceGetName", api.get_name);
  require("nvmlDeviceGetUUID", api.get_uuid);
  require("nvmlDeviceGetMemoryInfo", api.get_memory);
  require("nvmlDeviceGetUtilizationRates", api.get_utilization);
  require("nvmlDeviceGetPowerUsage", api.get_power);
  require("nvmlDeviceGetTotalEnergyConsumption", api.get_energy);
  require("nvmlDeviceGetTemperature", api.get_temperature);
  require("nvmlDeviceGetTotalEccErrors", api.get_ecc);
  resolve(library, "nvmlDeviceGetMigMode", api.get_mig_mode);
  // XIDs need all four event calls; with any missing, none is used.
  if (!resolve(library, "nvmlEventSetCreate", api.event_set_create) ||
      !resolve(library, "nvmlDeviceRegisterEvents", api.register_events) ||
      !resolve(library, "nvmlEventSetWait_v2", api.event_set_wait) ||
      !resolve(library, "nvmlEventSetFree", api.event_set_free)) {
    api.event_set_create = nullptr;
  }
  if (missing != nullptr) {
    return fail(ErrorCode::kUnavailable, library_name + " lacks " + missing +
                                             ": the NVIDIA driver is too old for this agent");
  }
  return api;
}

std::string error_text(const Api& api, Return code) {
  const char* text = api.error_string(code);
  return text != nullptr ? text : "NVML error " + std::to_string(code);
}

}  // namespace allot::agent::nvml
