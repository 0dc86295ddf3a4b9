// The NVML backend against a fake libnvidia-ml (fake_nvml.cc), loaded by path.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "agent/gpu/fake_nvml.h"
#include "agent/gpu/nvml_api.h"
#include "agent/gpu/nvml_backend.h"

namespace allot::agent {
namespace {

class NvmlBackendWithFakeLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    auto* get_state = reinterpret_cast<fake::State* (*)()>(dlsym(library_, "fake_nvml_state"));
    ASSERT_NE(get_state, nullptr);
    fake_ = get_state();
    *fake_ = fake::State{};
    fake_->gpus.resize(2);
    for (size_t i = 0; i < fake_->gpus.size(); ++i) {
      fake_->gpus[i].uuid = "GPU-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-dddddddddddd";
      fake_->gpus[i].bus_id = "00000000:" + std::to_string(18 + i) + ":00.0";
    }
  }
  void TearDown() override {
    if (library_ != nullptr) dlclose(library_);
  }

  std::unique_ptr<GpuBackend> open() {
    auto backend = open_nvml_backend_at(FAKE_NVML_PATH);
    EXPECT_TRUE(backend) << backend.error().message;
    return backend ? std::move(*backend) : nullptr;
  }

  void* library_ = nullptr;
  fake::State* fake_ = nullptr;
};

TEST_F(NvmlBackendWithFakeLibrary, DescribesEveryGpuInIndexOrder) {
  fake_->gpus[1].mig_result = nvml::kSuccess;
  fake_->gpus[1].mig_mode = nvml::kMigEnabled;
  auto backend = open();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->kind(), "nvml");
  ASSERT_EQ(backend->gpus().size(), 2u);
  EXPECT_EQ(backend->gpus()[0], (GpuInfo{.index = 0,
                                         .uuid = fake_->gpus[0].uuid,
                                         .name = "NVIDIA H200",
                                         .model = "H200-141GB",
                                         .memory_bytes = 150'754'820'096,
                                         .pci_bus_id = "00000000:18:00.0",
                                         .mig_enabled = false}));
  EXPECT_EQ(backend->gpus()[1].index, 1);
  EXPECT_TRUE(backend->gpus()[1].mig_enabled);
  EXPECT_TRUE(fake_->gpus[0].xids_registered);
}

TEST_F(NvmlBackendWithFakeLibrary, IsUnavailableWhenNvmlFailsOrSeesNoGpus) {
  fake_->init_result = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  auto backend = open_nvml_backend_at(FAKE_NVML_PATH);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backend.error().message.find("did not initialise"), std::string::npos);

  fake_->init_result = nvml::kSuccess;
  fake_->gpus.clear();
  backend = open_nvml_backend_at(FAKE_NVML_PATH);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backend.error().message.find("no GPUs"), std::string::npos);
  EXPECT_EQ(fake_->shutdowns, 1);  // Initialised once, shut down once.
}

TEST_F(NvmlBackendWithFakeLibrary, IsUnavailableWhenTheLibraryIsMissing) {
  auto backend = open_nvml_backend_at("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backend.error().message.find("cannot load"), std::string::npos);
}

TEST_F(NvmlBackendWithFakeLibrary, SamplesTelemetryWithEnergySinceOpenAcrossADriverReload) {
  fake::Gpu& gpu = fake_->gpus[0];
  gpu.energy_mj = 9'000'000;
  gpu.ecc_result = nvml::kErrorNotSupported;
  auto backend = open();
  ASSERT_NE(backend, nullptr);
  gpu.utilization_pct = 96;
  gpu.memory_used = 100'000'000'000;
  gpu.power_mw = 686'000;
  gpu.temperature_c = 71;
  gpu.energy_mj = 19'305'923;  // The load of shared/gpu.md: 10,305,923 mJ in 15 s.
  fake_->energy_calls = 0;
  GpuSample s = backend->sample(0)[0];
  EXPECT_EQ(s, (GpuSample{.uuid = gpu.uuid,
                          .utilization_pct = 96,
                          .memory_used_bytes = 100'000'000'000,
                          .power_mw = 686'000,
                          .energy_mj = 10'305'923,
                          .temperature_c = 71,
                          .ecc_errors = 0}));
  EXPECT_EQ(fake_->energy_calls, 2);  // Once per GPU per sample: each call costs ~4 ms.
  gpu.energy_mj = 1'000;              // The driver reloaded.
  EXPECT_EQ(backend->sample(0)[0].energy_mj, 10'306'923);
  gpu.ecc_result = nvml::kSuccess;
  gpu.ecc_errors = 2;
  EXPECT_EQ(backend->sample(0)[0].ecc_errors, 2);
}

TEST_F(NvmlBackendWithFakeLibrary, DeliversEachXidToItsGpuOnce) {
  auto backend = open();
  ASSERT_NE(backend, nullptr);
  fake_->events = {{.gpu = 1, .type = nvml::kEventTypeXidCriticalError, .data = 79},
                   {.gpu = 0, .type = nvml::kEventTypeXidCriticalError, .data = 48},
                   {.gpu = 1, .type = 0x4, .data = 0},  // Not an XID: ignored.
                   {.gpu = 1, .type = nvml::kEventTypeXidCriticalError, .data = 94}};
  auto s = backend->sample(0);
  EXPECT_EQ(s[0].xids, (std::vector<int>{48}));
  EXPECT_EQ(s[1].xids, (std::vector<int>{79, 94}));
  s = backend->sample(0);
  EXPECT_TRUE(s[0].xids.empty());
  EXPECT_TRUE(s[1].xids.empty());
}

TEST_F(NvmlBackendWithFakeLibrary, MarksAGpuLostForGoodWhenNvmlSaysItIs) {
  fake_->gpus[1].power_mw = 100'000;
  auto backend = open();
  ASSERT_NE(backend, nullptr);
  fake_->gpus[1].lost = true;
  fake_->events = {{.gpu = 1, .type = nvml::kEventTypeXidCriticalError, .data = 79}};
  auto s = backend->sample(0);
  EXPECT_EQ(s[1], (GpuSample{.uuid = fake_->gpus[1].uuid, .lost = true, .xids = {79}}));
  EXPECT_FALSE(s[0].lost);
  fake_->gpus[1].lost = false;
  EXPECT_TRUE(backend->sample(0)[1].lost);
}

TEST_F(NvmlBackendWithFakeLibrary, ShutsNvmlDownWhenClosed) {
  auto backend = open();
  ASSERT_NE(backend, nullptr);
  backend.reset();
  EXPECT_EQ(fake_->shutdowns, 1);
}

}  // namespace
}  // namespace allot::agent
