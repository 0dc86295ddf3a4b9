// The one catalog of the GPU models Allot knows: its names for them, how NVML names them, their
// memory and their draw. The agent reads it to name what NVML reports and to simulate boards; the
// core to check what requests ask for and to estimate energy where nothing was measured.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace allot {

struct GpuModelSpec {
  std::string_view model;        // Allot's name, e.g. "H200-141GB": the family, a dash, the size.
  std::string_view family;       // The chip as requests and driver names spell it, e.g. "H200".
  std::string_view driver_name;  // What NVML's nvmlDeviceGetName reports for the usual variant.
  int64_t memory_bytes;          // What NVML reports as total memory.
  int64_t idle_power_mw;         // The usual draw with nothing running.
  int64_t max_power_mw;          // The board's default power limit: what sustained training draws.
};

// Every known model, in catalog order.
std::span<const GpuModelSpec> gpu_catalog();

// The catalog entry named `model` exactly, or nullptr.
const GpuModelSpec* find_gpu_model(std::string_view model);

}  // namespace allot
