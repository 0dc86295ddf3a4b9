// Internal: the NVML backend over a library named by the caller, so that tests can load a fake
// NVML. open_nvml_backend() is this with "libnvidia-ml.so.1".
#pragma once

#include <memory>
#include <string>

#include "agent/gpu/gpu.h"

namespace allot::agent {

[[nodiscard]] Result<std::unique_ptr<GpuBackend>> open_nvml_backend_at(const std::string& library);

}  // namespace allot::agent
