#include "agent/gpu/gpu.h"

#include <gtest/gtest.h>

#include "common/gpu_catalog.h"

namespace allot::agent {
namespace {

TEST(CanonicalModel, NamesKnownGpusByFamilyAndMemory) {
  struct Case {
    const char* name;
    int64_t memory_bytes;
    const char* model;
  };
  const Case cases[] = {
      // The real H200 of shared/gpu.md.
      {"NVIDIA H200", 150'754'820'096, "H200-141GB"},
      {"NVIDIA H100 80GB HBM3", 85'520'809'984, "H100-80GB"},
      {"NVIDIA H100 PCIe", 85'520'809'984, "H100-80GB"},
      {"NVIDIA A100-SXM4-80GB", 85'899'345'920, "A100-80GB"},
      {"NVIDIA A100-SXM4-40GB", 42'505'273'344, "A100-40GB"},
      {"NVIDIA A100-PCIE-40GB", 42'949'672'960, "A100-40GB"},
      {"NVIDIA B200", 192'265'846'784, "B200-180GB"},
      {"NVIDIA L4", 24'152'899'584, "L4-24GB"},
      {"NVIDIA L40S", 48'305'799'168, "L40S-48GB"},
      {"NVIDIA GeForce RTX 4090", 25'757'220'864, "RTX4090-24GB"},
      {"H200", 150'754'820'096, "H200-141GB"},  // Without the vendor prefix.
  };
  for (const Case& c : cases) {
    EXPECT_EQ(canonical_model(c.name, c.memory_bytes), c.model) << c.name;
  }
}

TEST(CanonicalModel, ReturnsEmptyForGpusOutsideTheCatalog) {
  struct Case {
    const char* name;
    int64_t memory_bytes;
  };
  const Case cases[] = {
      {"NVIDIA L40", 48'305'799'168},           // Not an L40S, not an L4.
      {"NVIDIA GH200 480GB", 102'005'473'280},  // Not an H200.
      {"NVIDIA H100 NVL", 100'485'038'080},     // 94 GB: no catalog size fits.
      {"NVIDIA GeForce RTX 3090", 25'769'803'776},
      {"NVIDIA H200", 0},
      {"", 150'754'820'096},
  };
  for (const Case& c : cases) EXPECT_EQ(canonical_model(c.name, c.memory_bytes), "") << c.name;
}

TEST(CanonicalModel, NamesEveryCatalogModelFromItsOwnDriverName) {
  for (const GpuModelSpec& model : gpu_catalog()) {
    EXPECT_EQ(canonical_model(model.driver_name, model.memory_bytes), model.model);
    EXPECT_LT(model.idle_power_mw, model.max_power_mw) << model.model;
  }
}

TEST(EnergyAccumulator, CountsFromTheFirstReadingAndAcrossACounterReset) {
  EnergyAccumulator energy;
  struct Step {
    int64_t raw_mj;
    int64_t total_mj;
  };
  const Step steps[] = {
      {5'000'000, 0},  // Baseline: energy before the first reading is not ours.
      {5'000'700, 700}, {5'001'000, 1'000},
      {400, 1'400},                    // The driver reloaded: 400 mJ since the restart.
      {900, 1'900},     {900, 1'900},  // No change, no energy.
  };
  for (const Step& step : steps) EXPECT_EQ(energy.add_reading(step.raw_mj), step.total_mj);
}

TEST(NvmlBackend, IsUnavailableWhereThereIsNoNvidiaDriver) {
  auto backend = open_nvml_backend();
  if (backend) GTEST_SKIP() << "libnvidia-ml.so.1 loaded: this machine has an NVIDIA driver";
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backend.error().message.find("libnvidia-ml.so.1"), std::string::npos)
      << backend.error().message;
}

}  // namespace
}  // namespace allot::agent
