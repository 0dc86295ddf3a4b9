// `allot sim run` with node pools: the simulated autoscaler grows a pool under a generated daily
// demand and takes it back to its minimum at night without stopping any work; the report's pool
// figures hold together; bad pool, workload and forecast fields are refused by name; and a week
// runs without and with the forecast, both results printed side by side.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

using nlohmann::json;

const std::string kWeek = std::string(ALLOT_SOURCE_DIR) + "/examples/pools-week.json";

// Two days of work peaking at 14:00 UTC and stopping at the second midnight; the run goes on six
// hours more, so the pool's nodes have long been idle at the end.
json two_days() {
  return json::parse(R"({
    "start": "2026-11-02T00:00:00Z", "until": 194400, "heartbeat_s": 300,
    "autoscale_interval_s": 60,
    "prices": [{"at": 0, "model": "H100-80GB", "region": "eu", "per_gpu_hour": "2.50"}],
    "tenants": [{"name": "acme"}],
    "pools": [{"name": "h100", "model": "H100-80GB", "region": "eu", "min": 1, "max": 8,
               "gpus_per_node": 8, "boot_s": 180, "idle_timeout_s": 1200, "cooldown_s": 60}],
    "workload": {"seed": 11, "days": 2, "jobs_per_hour_peak": 12, "jobs_per_hour_trough": 0,
                 "peak_hour_utc": 14, "gpus": [4, 2, 1, 1], "run_s": {"mean": 2400, "range": 1200},
                 "model": "H100-80GB", "tenant": "acme", "project": "training"}
  })");
}

struct Written {
  TempDir dir;
  std::string path;
};

std::unique_ptr<Written> write(const json& doc) {
  auto out = std::make_unique<Written>();
  out->path = (out->dir.path() / "scenario.json").string();
  std::ofstream(out->path) << doc.dump();
  return out;
}

json run_json(const json& doc, std::vector<std::string> extra = {}) {
  const auto file = write(doc);
  std::vector<std::string> args = {"-o", "json", "sim", "run", file->path};
  args.insert(args.end(), extra.begin(), extra.end());
  // A week of a fleet twice over, under the sanitizers of the test build: well past a minute.
  const RunResult result = allot_offline(args, std::chrono::seconds(240));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return json::parse(result.out, nullptr, false);
}

// What the command printed on error; it must exit 2.
std::string refusal(json doc, const std::function<void(json&)>& spoil) {
  spoil(doc);
  const auto file = write(doc);
  const RunResult result = allot_offline({"sim", "run", file->path});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  return result.err;
}

// Available GPU-hours hold allocated and idle ones exactly (each rounded to three decimals).
void expect_pool_sums(const json& pool) {
  const double available = pool.at("gpu_hours_available");
  const double allocated = pool.at("gpu_hours_allocated");
  const double idle = pool.at("gpu_idle_hours");
  EXPECT_LE(allocated, available) << pool.dump();
  EXPECT_NEAR(idle, available - allocated, 0.0011) << pool.dump();
  // A node's GPUs are available only after it joins, and it is paid for from its request.
  EXPECT_LE(available, pool.at("node_hours").get<double>() * 8 + 0.001) << pool.dump();
}

TEST(SimPoolsTest, APoolGrowsForTheDaysPeakAndShrinksBackToItsMinimumAtNightStoppingNoWork) {
  const json out = run_json(two_days());
  ASSERT_FALSE(out.is_discarded());
  ASSERT_EQ(out.at("workloads").size(), 1u);
  EXPECT_EQ(out.at("workloads")[0].at("seed"), 11);
  const int64_t jobs = out.at("workloads")[0].at("jobs");
  EXPECT_GT(jobs, 100);  // About 12 x 48 / 2 jobs.
  ASSERT_EQ(out.at("instances").size(), static_cast<size_t>(jobs));
  // The autoscaler never takes a node that runs work: every job ran to its end.
  for (const json& i : out.at("instances")) {
    EXPECT_EQ(i.at("state"), "succeeded") << i.dump();
  }
  ASSERT_EQ(out.at("pools").size(), 1u);
  const json& pool = out.at("pools")[0];
  // The minimum node from the start, more for each day's peak, and back to one at the end.
  EXPECT_GE(pool.at("launched").get<int64_t>(), 3) << pool.dump();
  EXPECT_EQ(pool.at("nodes_at_end"), 1) << pool.dump();
  EXPECT_EQ(pool.at("retired").get<int64_t>(), pool.at("launched").get<int64_t>() - 1);
  EXPECT_EQ(pool.at("boot_failures"), 0);
  expect_pool_sums(pool);
  // Work waits at least while a node boots, and all of it started.
  const json& wait = out.at("queue_wait");
  EXPECT_EQ(wait.at("started"), jobs);
  EXPECT_EQ(wait.at("never_started"), 0);
  EXPECT_GE(wait.at("max_s").get<int64_t>(), 180);
  EXPECT_LE(wait.at("p50_s").get<int64_t>(), wait.at("p95_s").get<int64_t>());
  EXPECT_LE(wait.at("p95_s").get<int64_t>(), wait.at("max_s").get<int64_t>());
  EXPECT_EQ(pool.at("queue_wait"), wait);  // All the work ran on the pool.
  EXPECT_EQ(out.at("forecast").at("enabled"), false);
}

TEST(SimPoolsTest, ANodeThatDoesNotBootInTimeIsABootFailureAndNeverJoins) {
  json doc = two_days();
  doc["until"] = 7'200;
  doc["pools"][0]["boot_s"] = 900;
  doc["pools"][0]["boot_timeout_s"] = 600;
  doc["pools"][0]["min"] = 0;
  doc["workload"]["days"] = 1;
  doc["workload"]["jobs_per_hour_trough"] = 12;
  const json out = run_json(doc);
  const json& pool = out.at("pools")[0];
  EXPECT_GT(pool.at("boot_failures").get<int64_t>(), 0) << pool.dump();
  // Every node failed, but those asked for in the last boot timeout, which are still booting.
  EXPECT_EQ(pool.at("boot_failures").get<int64_t>() + pool.at("nodes_at_end").get<int64_t>(),
            pool.at("launched").get<int64_t>());
  EXPECT_EQ(pool.at("gpu_hours_available"), 0.0);
  EXPECT_GT(pool.at("node_hours").get<double>(), 0.0);  // Booting machines are paid for.
  EXPECT_EQ(out.at("queue_wait").at("started"), 0);
  EXPECT_GT(out.at("queue_wait").at("never_started").get<int64_t>(), 0);
}

TEST(SimPoolsTest, BadPoolWorkloadAndForecastFieldsAreRefusedByName) {
  const json doc = two_days();
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0]["min"] = 9; }).find("pools[0].max: "),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0]["model"] = "H900"; }).find("pools[0].model"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0]["gpus_per_node"] = 0; })
                .find("pools[0].gpus_per_node"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0]["boot_s"] = -1; }).find("pools[0].boot_s"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0].erase("max"); }).find("pools[0].max"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"][0]["name"] = "h 100"; }).find("pools[0].name"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["pools"].push_back(d["pools"][0]); })
                .find("pools[1].name: duplicate h100"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["workload"]["gpus"] = json::array({1, 2}); })
                .find("workload.gpus"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["workload"]["tenant"] = "nobody"; })
                .find("workload.tenant: unknown tenant"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["workload"]["jobs_per_hour_trough"] = 13; })
                .find("workload.jobs_per_hour_trough"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["workload"]["run_s"]["range"] = 2400; })
                .find("workload.run_s.range"),
            std::string::npos);
  EXPECT_NE(refusal(doc, [](json& d) { d["forecast"] = {{"lead_h", 0}}; }).find("forecast.lead_h"),
            std::string::npos);
  EXPECT_NE(
      refusal(doc, [](json& d) { d["forecast"] = {{"history_h", 24}}; }).find("forecast.history_h"),
      std::string::npos);
}

TEST(SimPoolsTest, TheSameSeedMakesTheSameWorkAndAnotherSeedOtherWork) {
  json doc = two_days();
  doc["until"] = 3'600;
  doc["workload"]["days"] = 1;
  const json a = run_json(doc);
  const json b = run_json(doc);
  doc["workload"]["seed"] = 12;
  const json c = run_json(doc);
  EXPECT_EQ(a.at("instances"), b.at("instances"));
  EXPECT_EQ(a.at("pools"), b.at("pools"));
  EXPECT_NE(a.at("workloads")[0].at("jobs"), 0);
  EXPECT_NE(a.at("instances"), c.at("instances"));
}

// Both runs print side by side, each with its pool's figures and the queue wait.
TEST(SimPoolsTest, CompareForecastPrintsBothRunsSideBySide) {
  const auto file = write(two_days());
  const RunResult table = allot_offline({"sim", "run", "--compare-forecast", file->path});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("workload seed 11"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("without forecast"), std::string::npos);
  EXPECT_NE(table.out.find("with forecast"), std::string::npos);
  EXPECT_NE(table.out.find("pool h100 gpu_idle_hours"), std::string::npos);
  EXPECT_NE(table.out.find("all queue wait mean_s"), std::string::npos);
}

// The example week, with less work so that the test stays quick: both runs finish with the same
// work, and only the second forecasts. Which one wins is not asserted: the figures are the
// experiment's result (docs/benchmarks.md).
TEST(SimPoolsTest, AWeekRunsWithoutAndWithTheForecast) {
  std::ifstream in(kWeek);
  json doc = json::parse(in);
  doc["workload"]["jobs_per_hour_peak"] = 8;
  doc["workload"]["jobs_per_hour_trough"] = 1;
  doc["forecast"]["compare"] = true;
  const json both = run_json(doc);
  ASSERT_FALSE(both.is_discarded());
  const json& without = both.at("without_forecast");
  const json& with = both.at("with_forecast");
  EXPECT_EQ(without.at("forecast").at("enabled"), false);
  EXPECT_EQ(without.at("forecast").at("hours_forecast"), 0);
  EXPECT_EQ(with.at("forecast").at("enabled"), true);
  // Two days of history before the first forecast, then one at every hour's start.
  EXPECT_EQ(with.at("forecast").at("hours_forecast"), (7 - 2) * 24 + 1);
  EXPECT_GT(with.at("forecast").at("largest_target_nodes").at("h100").get<int>(), 0);
  // The same work in both.
  EXPECT_EQ(without.at("workloads"), with.at("workloads"));
  for (const json* run : {&without, &with}) {
    for (const json& pool : run->at("pools")) expect_pool_sums(pool);
    // No work was stopped: each job ran to its end, or runs on at the week's end.
    for (const json& i : run->at("instances")) {
      EXPECT_TRUE(i.at("state") == "succeeded" || i.at("state") == "running") << i.dump();
    }
  }
}

}  // namespace
}  // namespace allot::testing
