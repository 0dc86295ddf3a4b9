#include "reports/usage.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/money/metering.h"
#include "reports/test_state.h"

namespace allot::billing {
namespace {

using namespace testing;

const TimeMs kNow = at("2026-11-21T00:00:00Z");

int64_t spend_of(const std::vector<UsageGroup>& groups) {
  int64_t sum = 0;
  for (const UsageGroup& g : groups) sum += g.spend_micros;
  return sum;
}

State two_instances() {
  State state = base_state();
  add_price(state, 2'333'333, 0);
  Instance labelled =
      ran("ins_01", kTenant, kVision, 1, 0, at("2026-11-01T22:00:00Z"), at("2026-11-03T01:30:00Z"));
  labelled.spec.labels["team"] = "research";
  state.put(labelled);
  state.put(ran("ins_02", kTenant, kSpeech, 0, 500, at("2026-11-02T10:00:00Z"),
                at("2026-11-02T12:00:00Z")));
  state.put(ran("ins_03", kOther, "prj_0000000000000009", 2, 0, at("2026-11-02T10:00:00Z"),
                at("2026-11-02T11:00:00Z")));
  return state;
}

UsageQuery november(GroupBy by, std::optional<std::string> tenant = kTenant) {
  return UsageQuery{.tenant_id = std::move(tenant),
                    .from_s = at("2026-11-01T00:00:00Z") / 1000,
                    .to_s = at("2026-12-01T00:00:00Z") / 1000,
                    .group_by = by,
                    .label_key = "team"};
}

TEST(UsageReport, DaysAreCutAtUtcMidnightsAndAddUpToTheWindow) {
  const State state = two_instances();
  auto days = usage_report(state, november(GroupBy::kDay), kNow);
  ASSERT_TRUE(days);
  ASSERT_EQ(days->size(), 3u);
  EXPECT_EQ((*days)[0].key, "2026-11-01");
  EXPECT_EQ((*days)[0].gpu_milli_seconds, 1'000 * 2 * 3'600);
  EXPECT_EQ((*days)[1].key, "2026-11-02");
  EXPECT_EQ((*days)[1].gpu_milli_seconds, 1'000 * 86'400 + 500 * 2 * 3'600);
  EXPECT_EQ((*days)[2].gpu_milli_seconds, 1'000 * 5'400);
  auto whole = usage_report(state, november(GroupBy::kTenant), kNow);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->size(), 1u);
  EXPECT_EQ(spend_of(*days), (*whole)[0].spend_micros);
  int64_t charges = 0;
  for (const char* id : {"ins_01", "ins_02"}) {
    charges += *charge_of(state, *usage_of(state, state.instances.at(id), kNow));
  }
  EXPECT_EQ((*whole)[0].spend_micros, charges);
}

TEST(UsageReport, GroupsByProjectLabelModelAndTenant) {
  const State state = two_instances();
  auto projects = usage_report(state, november(GroupBy::kProject), kNow);
  ASSERT_TRUE(projects);
  ASSERT_EQ(projects->size(), 2u);
  EXPECT_EQ((*projects)[0].key, kVision);
  EXPECT_EQ((*projects)[1].key, kSpeech);
  EXPECT_EQ((*projects)[1].gpu_milli_seconds, 500 * 7'200);
  auto labels = usage_report(state, november(GroupBy::kLabel), kNow);
  ASSERT_TRUE(labels);
  ASSERT_EQ(labels->size(), 2u);
  EXPECT_EQ((*labels)[0].key, "");  // Unlabelled.
  EXPECT_EQ((*labels)[1].key, "research");
  auto models = usage_report(state, november(GroupBy::kGpuModel, std::nullopt), kNow);
  ASSERT_TRUE(models);
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0].key, "H100-80GB");
  auto tenants = usage_report(state, november(GroupBy::kTenant, std::nullopt), kNow);
  ASSERT_TRUE(tenants);
  ASSERT_EQ(tenants->size(), 2u);
  EXPECT_EQ(spend_of(*tenants), spend_of(*models));
}

TEST(UsageReport, CallsToSharedServicesGroupUnderServicesNotABlankProject) {
  State state = two_instances();
  state.service_usage["use_1"] = ServiceUsage{.id = "use_1",
                                              .service_id = "svc_0000000000000001",
                                              .tenant_id = kOther,
                                              .caller_tenant_id = kTenant,
                                              .hour_ms = at("2026-11-05T10:00:00Z"),
                                              .requests = 3,
                                              .charged_micros = 4'500};
  for (GroupBy by : {GroupBy::kProject, GroupBy::kLabel, GroupBy::kGpuModel}) {
    auto groups = usage_report(state, november(by), kNow);
    ASSERT_TRUE(groups);
    auto calls = std::ranges::find(*groups, std::string("services"), &UsageGroup::key);
    ASSERT_NE(calls, groups->end());
    EXPECT_EQ(calls->spend_micros, 4'500);
    EXPECT_EQ(calls->gpu_milli_seconds, 0);
  }
}

TEST(UsageReport, RefusesEmptyAndOverlongWindows) {
  const State state = two_instances();
  UsageQuery empty = november(GroupBy::kTenant);
  empty.to_s = empty.from_s;
  EXPECT_EQ(usage_report(state, empty, kNow).error().code, ErrorCode::kInvalidArgument);
  UsageQuery long_days = november(GroupBy::kDay);
  long_days.to_s = long_days.from_s + int64_t{367} * 86'400;
  EXPECT_EQ(usage_report(state, long_days, kNow).error().code, ErrorCode::kInvalidArgument);
}

TEST(MonthForecast, IsSpendSoFarPlusTheRunningBurnToTheMonthsEnd) {
  State state = base_state();
  add_price(state, 3'600 * kUnit, 0);  // One unit per GPU-second.
  state.put(ran("ins_01", kTenant, kVision, 1, 0, at("2026-10-31T00:00:00Z"),
                at("2026-11-01T01:00:00Z")));  // 1 h in November.
  state.put(ran("ins_02", kTenant, kVision, 2, 0, at("2026-11-30T22:00:00Z"), 0));  // Running.
  const TimeMs now = at("2026-11-30T23:00:00Z");
  auto forecast = month_forecast(state, kTenant, now);
  ASSERT_TRUE(forecast);
  EXPECT_EQ(forecast->month_ms, at("2026-11-01T00:00:00Z"));
  EXPECT_EQ(forecast->spent_micros, (3'600 + 2 * 3'600) * kUnit);
  EXPECT_EQ(forecast->burn_micros_per_hour, 2 * kUnit * 3'600);
  EXPECT_EQ(forecast->forecast_micros, (3 * 3'600 + 2 * 3'600) * kUnit);
  auto other = month_forecast(state, kOther, now);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->forecast_micros, 0);
}

}  // namespace
}  // namespace allot::billing
