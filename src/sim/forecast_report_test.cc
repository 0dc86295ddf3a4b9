#include "sim/forecast_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/demand.h"

namespace allot::sim {
namespace {

constexpr std::string_view kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(ParseTimedPods, ReadsWhenEachPodLivedAndTakesAnyModelName) {
  Result<std::vector<TimedPod>> pods =
      parse_timed_pods(std::string(kHeader) + "a,1000,10,2,1000,H200|T4,LS,Running,100,7300,100\n" +
                           "b,1000,10,1,250,,LS,Pending,50,50,\n",
                       "pods.csv");
  ASSERT_TRUE(pods) << pods.error().message;
  ASSERT_EQ(pods->size(), 2U);
  EXPECT_EQ(pods->at(0).request.gpus, 2);
  EXPECT_EQ(pods->at(0).request.models, (std::vector<std::string>{"H200", "T4"}));
  EXPECT_EQ(pods->at(0).creation_s, 100);
  EXPECT_EQ(pods->at(0).deletion_s, 7300);
  EXPECT_EQ(pods->at(1).request.gpu_milli, 250);
}

TEST(ParseTimedPods, RefusesAListWithoutTimesAndADeletionBeforeItsCreation) {
  Result<std::vector<TimedPod>> untimed =
      parse_timed_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,500\n", "m.csv");
  ASSERT_FALSE(untimed);
  EXPECT_EQ(untimed.error().message, "m.csv:1: field 'creation_time': missing from the header");
  Result<std::vector<TimedPod>> backwards =
      parse_timed_pods(std::string(kHeader) + "a,1,1,1,1000,,LS,Failed,500,499,500\n", "p.csv");
  ASSERT_FALSE(backwards);
  EXPECT_EQ(backwards.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(backwards.error().message,
            "p.csv:2: field 'deletion_time': 499 is before creation_time 500");
}

TimedPod pod(int gpus, int milli, std::vector<std::string> models, int64_t from_s, int64_t to_s) {
  return TimedPod{sched::Request{.gpus = gpus, .gpu_milli = milli, .models = std::move(models)},
                  from_s, to_s};
}

TEST(HourlyDemand, WeighsEachPodByTheShareOfTheHourItLived) {
  const Demand demand = hourly_demand({
      pod(2, 0, {}, 1800, 9000),             // 2 GPUs from 0:30 to 2:30.
      pod(0, 500, {"T4", "P100"}, 0, 3600),  // Half a T4 for hour 0.
      pod(0, 0, {}, 0, 10'000),              // CPU only: no GPU demand, but sets the end.
  });
  EXPECT_EQ(demand.hours, 2);  // 10,000 s: the third hour is partial and left out.
  ASSERT_EQ(demand.gpus_by_model.size(), 2U);
  EXPECT_EQ(demand.gpus_by_model.at("any"), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(demand.gpus_by_model.at("T4"), (std::vector<double>{0.5, 0.0}));
  EXPECT_EQ(demand.pods_by_model.at("T4"), 1);
  EXPECT_EQ(demand.created, (std::vector<int>{2, 0}));
}

TEST(FirstBusyHour, FindsTheFirstDayWithEnoughCreations) {
  std::vector<int> created(100, 0);
  created[5] = 1;   // A quiet day.
  created[60] = 2;  // With the next, 4 within the day that starts at hour 47.
  created[70] = 2;
  EXPECT_EQ(first_busy_hour(created, 4), 70 - 23);
  EXPECT_EQ(first_busy_hour(created, 1), 0);  // The day starting at 0 holds hour 5.
  EXPECT_EQ(first_busy_hour(created, 5), -1);
}

TEST(ForecastTrace, RefusesAHoldoutOutsideItsRange) {
  const std::vector<TimedPod> pods = {pod(1, 0, {}, 0, 500'000)};
  EXPECT_EQ(forecast_trace(pods, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(forecast_trace(pods, kMaxHoldoutDays + 1).error().code, ErrorCode::kInvalidArgument);
}

// The published trace, where this checkout has it: every model is scored over exactly the hours
// the report states, with finite errors wherever some held-back hour had demand.
TEST(ForecastTrace, ScoresBothForecastsOnTheOpenbTrace) {
  const std::filesystem::path dir = "/work/shared/data/openb";
  if (!std::filesystem::exists(dir / "pod_list_default.csv")) GTEST_SKIP() << "no trace data";
  for (const char* trace : {"default", "gpushare40", "gpuspec33"}) {
    SCOPED_TRACE(trace);
    Result<std::vector<TimedPod>> pods =
        read_timed_pods((dir / fmt::format("pod_list_{}.csv", trace)).string());
    ASSERT_TRUE(pods) << pods.error().message;
    Result<ForecastReport> report = forecast_trace(*pods, 7);
    ASSERT_TRUE(report) << report.error().message;
    const nlohmann::json json = to_json(*report);
    const int window = json.at("trace_hours").get<int>() - json.at("start_hour").get<int>();
    ASSERT_GT(window, 14 * 24);
    ASSERT_FALSE(json.at("models").empty());
    // Pods without a gpu_spec are most of every trace.
    EXPECT_TRUE(std::ranges::any_of(json.at("models"), [](const nlohmann::json& model) {
      return model.at("model") == "any" && model.at("pods").get<int>() > 4000;
    }));
    const std::string table = to_table(*report);
    for (const nlohmann::json& model : json.at("models")) {
      const std::string name = model.at("model").get<std::string>();
      SCOPED_TRACE(name);
      EXPECT_NE(table.find("\n" + name + " "), std::string::npos);
      EXPECT_EQ(model.at("holdout_hours"), 7 * 24);
      EXPECT_EQ(model.at("fitted_hours").get<int>(), window - 7 * 24);
      for (const char* method : {"holt_winters", "naive"}) {
        const nlohmann::json& score = model.at(method);
        EXPECT_EQ(score.at("wape_hours"), 7 * 24);
        EXPECT_EQ(
            score.at("mape_hours").get<int>() + score.at("mape_skipped_zero_hours").get<int>(),
            7 * 24);
        if (score.at("mape_hours").get<int>() == 0) continue;
        EXPECT_TRUE(std::isfinite(score.at("mape_pct").get<double>()));
        EXPECT_TRUE(std::isfinite(score.at("wape_pct").get<double>()));
      }
    }
  }
  Result<std::vector<TimedPod>> untimed =
      read_timed_pods((dir / "pod_list_multigpu30.csv").string());
  ASSERT_FALSE(untimed);
  EXPECT_NE(untimed.error().message.find("creation_time"), std::string::npos);
}

}  // namespace
}  // namespace allot::sim
