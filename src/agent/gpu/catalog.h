// Allot's GPU catalog: the models a simulated node can have and canonical_model can name. Internal
// to the agent's GPU component.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace allot::agent {

struct GpuModel {
  std::string_view model;        // Allot's name, e.g. "H200-141GB".
  std::string_view family;       // The chip as driver names contain it, e.g. "H200".
  std::string_view driver_name;  // What NVML's nvmlDeviceGetName reports for the usual variant.
  int64_t memory_bytes;          // What NVML reports as total memory.
  int64_t idle_power_mw;
  int64_t max_power_mw;  // The board's default power limit.
};

// Every known model, in catalog order.
std::span<const GpuModel> gpu_catalog();

// The catalog entry named `model` exactly, or nullptr.
const GpuModel* find_gpu_model(std::string_view model);

}  // namespace allot::agent
