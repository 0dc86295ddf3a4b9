#include "common/gpu_catalog.h"

#include <algorithm>
#include <array>

namespace allot {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Memory sizes are what NVML reports as total (a little less than the marketing figure, because
// the driver reserves some). Idle draw is what such boards draw with nothing running; the H200's
// is what a real node showed (shared/gpu.md: 150,754,820,096 bytes, idle 79-122 W, limit 700 W).
constexpr std::array<GpuModelSpec, 8> kCatalog = {{
    {"A100-40GB", "A100", "NVIDIA A100-SXM4-40GB", 40'960 * kMiB, 50'000, 400'000},
    {"A100-80GB", "A100", "NVIDIA A100-SXM4-80GB", 81'920 * kMiB, 60'000, 400'000},
    {"H100-80GB", "H100", "NVIDIA H100 80GB HBM3", 81'559 * kMiB, 80'000, 700'000},
    {"H200-141GB", "H200", "NVIDIA H200", 150'754'820'096, 80'000, 700'000},
    {"B200-180GB", "B200", "NVIDIA B200", 183'359 * kMiB, 120'000, 1'000'000},
    {"L4-24GB", "L4", "NVIDIA L4", 23'034 * kMiB, 15'000, 72'000},
    {"L40S-48GB", "L40S", "NVIDIA L40S", 46'068 * kMiB, 40'000, 350'000},
    {"RTX4090-24GB", "RTX4090", "NVIDIA GeForce RTX 4090", 24'564 * kMiB, 25'000, 450'000},
}};

}  // namespace

std::span<const GpuModelSpec> gpu_catalog() { return kCatalog; }

const GpuModelSpec* find_gpu_model(std::string_view model) {
  const auto* it = std::ranges::find(kCatalog, model, &GpuModelSpec::model);
  return it == kCatalog.end() ? nullptr : it;
}

}  // namespace allot
