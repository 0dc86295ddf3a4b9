#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "agent/gpu/gpu.h"
#include "common/gpu_catalog.h"
#include "support/temp_dir.h"

namespace allot::agent {
namespace {

constexpr TimeMs kStartMs = 1'790'000'000'000;  // Late 2026.

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

void append_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

std::unique_ptr<GpuBackend> open_or_die(std::string_view spec, uint64_t seed,
                                        std::string faults = {}) {
  auto backend = open_simulated_backend(spec, seed, std::move(faults));
  EXPECT_TRUE(backend) << spec << ": " << backend.error().message;
  return backend ? std::move(*backend) : nullptr;
}

TEST(SimulatedBackend, BuildsCountTimesModelFromTheSpec) {
  auto backend = open_or_die("8xH100-80GB", 1);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->kind(), "simulated");
  ASSERT_EQ(backend->gpus().size(), 8u);
  std::set<std::string> uuids;
  std::set<std::string> buses;
  for (int i = 0; i < 8; ++i) {
    const GpuInfo& gpu = backend->gpus()[static_cast<size_t>(i)];
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.model, "H100-80GB");
    EXPECT_EQ(canonical_model(gpu.name, gpu.memory_bytes), gpu.model);
    EXPECT_FALSE(gpu.mig_enabled);
    ASSERT_EQ(gpu.uuid.size(), 40u) << gpu.uuid;  // "GPU-" + 36.
    EXPECT_EQ(gpu.uuid.substr(0, 4), "GPU-");
    EXPECT_EQ(gpu.pci_bus_id.size(), 16u) << gpu.pci_bus_id;
    uuids.insert(gpu.uuid);
    buses.insert(gpu.pci_bus_id);
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(buses.size(), 8u);
}

TEST(SimulatedBackend, ReadsModelsFromASpecFileSkippingBlanksAndComments) {
  testing::TempDir dir;
  write_file(dir.path() / "node.txt",
             "# a mixed node\nH200-141GB\n\n  L4-24GB  # inference\nB200-180GB");
  auto backend = open_or_die((dir.path() / "node.txt").string(), 1);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(backend->gpus().size(), 3u);
  EXPECT_EQ(backend->gpus()[0].model, "H200-141GB");
  EXPECT_EQ(backend->gpus()[0].memory_bytes, 150'754'820'096);
  EXPECT_EQ(backend->gpus()[1].model, "L4-24GB");
  EXPECT_EQ(backend->gpus()[2].model, "B200-180GB");
}

TEST(SimulatedBackend, RefusesBadSpecsNamingTheProblem) {
  testing::TempDir dir;
  write_file(dir.path() / "unknown.txt", "H100-80GB\nV100-16GB\n");
  write_file(dir.path() / "empty.txt", "# nothing\n\n");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += "L4-24GB\n";
  write_file(dir.path() / "big.txt", seventeen);
  struct Case {
    std::string spec;
    std::string message_part;
  };
  const Case cases[] = {
      {"", "empty"},
      {"0xH100-80GB", "1..16"},
      {"17xH100-80GB", "1..16"},
      {"-1xH100-80GB", "neither"},
      {"8xV100-16GB", "unknown GPU model \"V100-16GB\""},
      {"8x", "unknown GPU model \"\""},
      {"8 xH100-80GB", "1..16"},
      {"99999999999999999999xL4-24GB", "1..16"},
      {(dir.path() / "missing.txt").string(), "neither COUNTxMODEL nor a readable file"},
      {(dir.path() / "unknown.txt").string(), "unknown.txt:2: unknown GPU model \"V100-16GB\""},
      {(dir.path() / "empty.txt").string(), "must list 1..16"},
      {(dir.path() / "big.txt").string(), "must list 1..16"},
  };
  for (const Case& c : cases) {
    auto backend = open_simulated_backend(c.spec, 1);
    ASSERT_FALSE(backend) << c.spec;
    EXPECT_EQ(backend.error().code, ErrorCode::kInvalidArgument) << c.spec;
    EXPECT_NE(backend.error().message.find(c.message_part), std::string::npos)
        << c.spec << ": " << backend.error().message;
  }
}

// What running work holds, as the agent tells the backend before each sample.
std::set<std::string> all_uuids(const GpuBackend& backend) {
  std::set<std::string> uuids;
  for (const GpuInfo& gpu : backend.gpus()) uuids.insert(gpu.uuid);
  return uuids;
}

TEST(SimulatedBackend, RepeatsExactlyForTheSameSeedAndDiffersForAnother) {
  auto a = open_or_die("4xA100-80GB", 42);
  auto b = open_or_die("4xA100-80GB", 42);
  auto other = open_or_die("4xA100-80GB", 43);
  ASSERT_TRUE(a && b && other);
  EXPECT_EQ(a->gpus(), b->gpus());
  EXPECT_NE(a->gpus()[0].uuid, other->gpus()[0].uuid);
  a->set_held(all_uuids(*a));
  b->set_held(all_uuids(*b));
  other->set_held(all_uuids(*other));
  bool telemetry_differs = false;
  for (TimeMs t = kStartMs; t < kStartMs + 600'000; t += 5'000) {
    const auto sa = a->sample(t);
    EXPECT_EQ(sa, b->sample(t)) << t;
    const auto so = other->sample(t);
    telemetry_differs |= sa[0].utilization_pct != so[0].utilization_pct;
  }
  EXPECT_TRUE(telemetry_differs);
}

TEST(SimulatedBackend, HeldGpusRunALoadWithinTheModelsLimits) {
  auto backend = open_or_die("2xL40S-48GB", 7);
  ASSERT_NE(backend, nullptr);
  backend->set_held(all_uuids(*backend));
  std::set<int> utilizations;
  for (TimeMs t = kStartMs; t < kStartMs + 3'600'000; t += 10'000) {
    for (const GpuSample& s : backend->sample(t)) {
      EXPECT_GE(s.utilization_pct, 55);
      EXPECT_LE(s.utilization_pct, 100);
      EXPECT_GT(s.memory_used_bytes, 0);
      EXPECT_LT(s.memory_used_bytes, 46'068LL << 20);
      EXPECT_GE(s.power_mw, 35'000);
      EXPECT_LE(s.power_mw, 350'000);
      EXPECT_GE(s.temperature_c, 25);
      EXPECT_LE(s.temperature_c, 90);
      EXPECT_FALSE(s.lost);
      utilizations.insert(s.utilization_pct);
    }
  }
  EXPECT_GT(utilizations.size(), 20u);  // The load varies.
}

TEST(SimulatedBackend, FreeGpusReadIdleAndHeldOnesBusy) {
  auto backend = open_or_die("4xH100-80GB", 11);
  ASSERT_NE(backend, nullptr);
  const GpuModelSpec& model = *find_gpu_model("H100-80GB");
  // Nothing holds any GPU: every one reads 0 %, no memory used and its idle power.
  for (TimeMs t = kStartMs; t < kStartMs + 600'000; t += 10'000) {
    for (const GpuSample& s : backend->sample(t)) {
      EXPECT_EQ(s.utilization_pct, 0) << t;
      EXPECT_EQ(s.memory_used_bytes, 0) << t;
      EXPECT_EQ(s.power_mw, model.idle_power_mw) << t;
      EXPECT_LE(s.temperature_c, 35) << t;
    }
  }
  // Work takes GPUs 1 and 3: those run busy, the others stay idle; when it ends they idle again.
  backend->set_held({backend->gpus()[1].uuid, backend->gpus()[3].uuid});
  for (TimeMs t = kStartMs + 600'000; t < kStartMs + 1'200'000; t += 10'000) {
    const auto s = backend->sample(t);
    EXPECT_EQ(s[0].utilization_pct, 0);
    EXPECT_EQ(s[2].power_mw, model.idle_power_mw);
    EXPECT_GE(s[1].utilization_pct, 55);
    EXPECT_GE(s[3].utilization_pct, 55);
    EXPECT_GT(s[1].power_mw, model.idle_power_mw);
    EXPECT_GT(s[3].memory_used_bytes, 0);
  }
  backend->set_held({});
  for (const GpuSample& s : backend->sample(kStartMs + 1'300'000)) {
    EXPECT_EQ(s.utilization_pct, 0);
    EXPECT_EQ(s.power_mw, model.idle_power_mw);
  }
}

TEST(SimulatedBackend, IntegratesPowerExactlyAndNeverDecreases) {
  auto backend = open_or_die("1xH200-141GB", 3);
  ASSERT_NE(backend, nullptr);
  // Irregular intervals, a repeated instant and a clock that steps back.
  const TimeMs offsets_ms[] = {0, 1, 999, 1'000, 7'333, 7'333, 20'001, 15'000, 95'017, 3'600'000};
  int64_t expected_uj = 0;
  int64_t power_mw = 0;
  TimeMs last_ms = kStartMs;
  int64_t previous_mj = 0;
  for (const TimeMs offset : offsets_ms) {
    const TimeMs now = kStartMs + offset;
    if (now > last_ms) expected_uj += power_mw * (now - last_ms);
    last_ms = std::max(last_ms, now);
    const GpuSample s = backend->sample(now)[0];
    EXPECT_EQ(s.energy_mj, expected_uj / 1000) << offset;
    EXPECT_GE(s.energy_mj, previous_mj) << offset;
    previous_mj = s.energy_mj;
    power_mw = s.power_mw;
  }
  EXPECT_GT(previous_mj, 80'000LL * 3'500);  // At least idle power for about an hour.
}

TEST(SimulatedBackend, ReportsEachXidLineOnceAndLostGpusForGood) {
  testing::TempDir dir;
  const auto faults = dir.path() / "faults";
  auto backend = open_or_die("4xH100-80GB", 5, faults.string());
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(backend->sample(kStartMs)[1].xids.empty());  // No file: no faults.

  write_file(faults, "xid 1 79\nxid 1 48\n# xid 2 13\nbogus line\nxid 9 13\nxid 2 6");
  auto s = backend->sample(kStartMs + 1'000);
  EXPECT_EQ(s[1].xids, (std::vector<int>{79, 48}));
  EXPECT_TRUE(s[2].xids.empty());  // Its line has no newline yet: it may be half-written.
  append_file(faults, "3\n");
  s = backend->sample(kStartMs + 2'000);
  EXPECT_TRUE(s[1].xids.empty());
  EXPECT_EQ(s[2].xids, (std::vector<int>{63}));
  append_file(faults, "xid 1 79\nlost 3\n");  // The same XID again, on a new line.
  s = backend->sample(kStartMs + 3'000);
  EXPECT_EQ(s[1].xids, (std::vector<int>{79}));
  EXPECT_EQ(s[3], (GpuSample{.uuid = backend->gpus()[3].uuid, .lost = true}));

  std::filesystem::remove(faults);
  s = backend->sample(kStartMs + 4'000);
  EXPECT_TRUE(s[3].lost);
  EXPECT_EQ(s[3].power_mw, 0);
  EXPECT_FALSE(s[0].lost);
  EXPECT_GT(s[0].power_mw, 0);
}

TEST(SimulatedBackend, UtilLinesSetAGpusUtilisationWhileTheyAreThere) {
  testing::TempDir dir;
  const auto faults = dir.path() / "faults";
  auto backend = open_or_die("3xH100-80GB", 9, faults.string());
  ASSERT_NE(backend, nullptr);
  const auto simulated = backend->sample(kStartMs);
  write_file(faults, "util 0 3\nutil 1 100\nutil 1 97\nutil 2 101\nutil 7 5\n");
  auto s = backend->sample(kStartMs);
  EXPECT_EQ(s[0].utilization_pct, 3);
  EXPECT_EQ(s[1].utilization_pct, 97);                            // The last line for a GPU counts.
  EXPECT_EQ(s[2].utilization_pct, simulated[2].utilization_pct);  // 101 % is no reading.
  EXPECT_TRUE(s[0].utilization_read);

  std::filesystem::remove(faults);
  s = backend->sample(kStartMs);
  EXPECT_EQ(s[0].utilization_pct, simulated[0].utilization_pct);
  EXPECT_EQ(s[1].utilization_pct, simulated[1].utilization_pct);
}

}  // namespace
}  // namespace allot::agent
