// The few NVML types and entry points the agent uses, declared from NVML's documented C API
// (nvml.h) so that the agent builds without CUDA and loads the library at run time. Layouts must
// match the driver's exactly; the static_asserts pin them on the 64-bit targets we build for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"

namespace allot::agent::nvml {

// nvmlReturn_t and the other enums are C enums: int-sized in the platform ABI.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;

inline constexpr unsigned kTemperatureGpu = 0;          // NVML_TEMPERATURE_GPU
inline constexpr unsigned kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr unsigned kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr unsigned kMigEnabled = 1;              // NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

// nvml.h's NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE.
inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;

using Device = struct nvmlDevice_st*;
using EventSet = struct nvmlEventSet_st*;

// nvmlPciInfo_t as _v3 fills it. _v2 fills only busIdLegacy and the numbers.
struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(PciInfo) == 68 && offsetof(PciInfo, busId) == 36);

struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(Memory) == 24);

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
static_assert(sizeof(Utilization) == 8);

struct EventData {
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;  // The XID code for kEventTypeXidCriticalError.
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(EventData) == 32 && offsetof(EventData, eventData) == 16);

// Function pointer types, one per entry point, named after it.
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using GetCountFn = Return (*)(unsigned int*);
using GetHandleByIndexFn = Return (*)(unsigned int, Device*);
using GetPciInfoFn = Return (*)(Device, PciInfo*);
using GetStringFn = Return (*)(Device, char*, unsigned int);  // GetName, GetUUID
using GetMemoryInfoFn = Return (*)(Device, Memory*);
using GetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using GetUtilizationRatesFn = Return (*)(Device, Utilization*);
using GetPowerUsageFn = Return (*)(Device, unsigned int*);
using GetTotalEnergyConsumptionFn = Return (*)(Device, unsigned long long*);
using GetTemperatureFn = Return (*)(Device, unsigned, unsigned int*);
using GetTotalEccErrorsFn = Return (*)(Device, unsigned, unsigned, unsigned long long*);
using EventSetCreateFn = Return (*)(EventSet*);
using RegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);
using EventSetFreeFn = Return (*)(EventSet);

// The entry points, resolved from a loaded library.
struct Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  GetCountFn get_count = nullptr;
  GetHandleByIndexFn get_handle = nullptr;
  GetPciInfoFn get_pci_info = nullptr;
  bool pci_info_v3 = true;
  GetStringFn get_name = nullptr;
  GetStringFn get_uuid = nullptr;
  GetMemoryInfoFn get_memory = nullptr;
  GetUtilizationRatesFn get_utilization = nullptr;
  GetPowerUsageFn get_power = nullptr;
  GetTotalEnergyConsumptionFn get_energy = nullptr;
  GetTemperatureFn get_temperature = nullptr;
  GetTotalEccErrorsFn get_ecc = nullptr;
  // Optional: drivers without MIG or without the event API still give telemetry.
  GetMigModeFn get_mig_mode = nullptr;
  EventSetCreateFn event_set_create = nullptr;
  RegisterEventsFn register_events = nullptr;
  EventSetWaitFn event_set_wait = nullptr;
  EventSetFreeFn event_set_free = nullptr;
};

// Resolves every entry point from a dlopen handle; fails with kUnavailable naming the first
// required one the library lacks.
[[nodiscard]] Result<Api> resolve_api(void* library, const std::string& library_name);

// nvmlErrorString's text for a code, or the number when the library gives none.
std::string error_text(const Api& api, Return code);

}  // namespace allot::agent::nvml
