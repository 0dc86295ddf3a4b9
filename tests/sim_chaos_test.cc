// `allot sim chaos` as an operator runs it: a few hundred seeds with faults at the store break no
// invariant and reach every part of the core; a GPU's milli written wrong on purpose is caught and
// named with its seed and step; a seed replays exactly; bad flags are refused.
#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {
namespace {

using nlohmann::json;

// A few hundred seeds take minutes in a debug build on a busy machine.
constexpr std::chrono::seconds kChaosLimit(1'200);

json chaos(const std::vector<std::string>& flags, int exit_code) {
  std::vector<std::string> args = {"sim", "chaos", "-o", "json"};
  args.insert(args.end(), flags.begin(), flags.end());
  const RunResult result = allot_offline(args, kChaosLimit);
  EXPECT_EQ(result.exit_code, exit_code) << result.out << result.err;
  json report = json::parse(result.out, nullptr, false);
  EXPECT_FALSE(report.is_discarded()) << result.out;
  return report;
}

// Under the test build's sanitizers each seed costs about three times as much: a third of them
// keep the test within ctest's five minutes (ALLOT_CHAOS_SEEDS, tests/CMakeLists.txt).
constexpr int kSeeds = ALLOT_CHAOS_SEEDS;

TEST(SimChaosTest, HundredsOfSeedsWithFaultsAtTheStoreBreakNothing) {
  const json report = chaos({"--seeds", "1-" + std::to_string(kSeeds)}, 0);
  EXPECT_EQ(report["seeds_run"], kSeeds);
  EXPECT_EQ(report["violations"], json::array()) << report["violations"].dump(2);
  EXPECT_EQ(report["steps"], kSeeds * 201);
  EXPECT_GT(report["checks"].get<int64_t>(), report["steps"].get<int64_t>());
  EXPECT_GT(report["faults"]["commit_failed"].get<int64_t>(), kSeeds / 3);
  EXPECT_GT(report["faults"]["crash"].get<int64_t>(), kSeeds / 3);
  // The runs reach what the checks are about: work that ran, was preempted or lost with its node,
  // money that moved, events that were numbered.
  const json& instances = report["reached"]["instances"];
  for (const char* state : {"running", "succeeded", "preempted", "lost", "stopped", "queued"}) {
    EXPECT_GT(instances.value(state, 0), 0) << state;
  }
  EXPECT_GT(report["reached"]["nodes_lost"].get<int64_t>(), 0);
  EXPECT_GT(report["reached"]["transfers"].get<int64_t>(), kSeeds * 10 / 3);
  EXPECT_GT(report["reached"]["events"].get<int64_t>(), 0);
}

TEST(SimChaosTest, ACorruptedGpuIsCaughtAndNamedWithItsSeedAndStep) {
  const json report = chaos({"--seeds", "4-5", "--corrupt-gpu-at", "40"}, 8);
  ASSERT_EQ(report["violations"].size(), 2u) << report.dump(2);
  for (uint64_t seed : {4u, 5u}) {
    const json& v = report["violations"][seed - 4];
    EXPECT_EQ(v["seed"], seed);
    EXPECT_EQ(v["step"], 40);
    EXPECT_EQ(v["invariant"], "gpu_milli");
    EXPECT_NE(v["detail"].get<std::string>().find("GPU"), std::string::npos);
  }
  // The table says the same for a person.
  const RunResult table = allot_offline({"sim", "chaos", "--seeds", "4", "--corrupt-gpu-at", "40"});
  EXPECT_EQ(table.exit_code, 8);
  EXPECT_NE(table.out.find("seed 4 step 40"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("gpu_milli"), std::string::npos) << table.out;
}

TEST(SimChaosTest, ASeedReplaysExactly) {
  json first = chaos({"--seeds", "17", "--steps", "300"}, 0);
  json second = chaos({"--seeds", "17", "--steps", "300"}, 0);
  first.erase("wall_s");
  second.erase("wall_s");
  EXPECT_EQ(first, second);
}

TEST(SimChaosTest, BadFlagsAreRefused) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--seeds", "9-3"},
                                                {"--seeds", "1-5000"},
                                                {"--seeds", "x"},
                                                {"--steps", "0"},
                                                {"--fault-percent", "101"},
                                                {"--corrupt-gpu-at", "-1"}}) {
    std::vector<std::string> args = {"sim", "chaos"};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult result = allot_offline(args);
    EXPECT_EQ(result.exit_code, 2) << flags[0] << " " << flags[1] << ": " << result.out;
    EXPECT_FALSE(result.err.empty()) << flags[0];
  }
}

}  // namespace
}  // namespace allot::testing
