// Usage reports: GPU-hours and spend of instances, GB-seconds and spend of volumes' storage, and
// the spend of calls to other tenants' shared services, over a window, grouped, and a forecast of
// the current month's spend. Spend comes from charge_between and the calls' rows, like invoices,
// so a report over a calendar month matches that month's invoice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/kernel/state.h"

namespace allot::billing {

enum class GroupBy { kTenant, kProject, kLabel, kGpuModel, kDay };

// A day report covers at most this many days, so that one answer stays small.
inline constexpr int64_t kMaxReportDays = 366;

struct UsageQuery {
  std::optional<std::string> tenant_id;  // Unset: every tenant.
  int64_t from_s = 0;                    // [from_s, to_s), whole seconds since the epoch.
  int64_t to_s = 0;
  GroupBy group_by = GroupBy::kTenant;
  std::string label_key;  // For kLabel: instances without the label group under "".
};

struct UsageGroup {
  std::string key;  // A tenant, project or label value, GPU model, or day ("2026-12-01").
  int64_t gpu_milli_seconds = 0;
  int64_t gb_seconds = 0;  // Volumes' provisioned GB x seconds (grouped by GPU model: "storage").
  int64_t spend_micros = 0;
  // Energy and carbon of the whole UTC days that start in the window (by day: that day's).
  int64_t energy_mj = 0;
  int64_t carbon_ug = 0;

  bool operator==(const UsageGroup&) const = default;
};

// The groups with use in the window, ordered by key. Fails with kInvalidArgument when the window
// is empty or, grouped by day, longer than kMaxReportDays, and kOverflow when a sum leaves int64.
[[nodiscard]] Result<std::vector<UsageGroup>> usage_report(const State& state,
                                                           const UsageQuery& query, TimeMs now_ms);

struct Forecast {
  TimeMs month_ms = 0;       // The current month's first moment.
  int64_t spent_micros = 0;  // From the month's start to now.
  // Of the instances running now and the live volumes, at the prices in force now.
  int64_t burn_micros_per_hour = 0;
  // Spent, plus the running instances' and live volumes' charge to the month's end.
  int64_t forecast_micros = 0;
};

// The month-end forecast for one tenant (or every tenant when unset) at `now_ms`.
[[nodiscard]] Result<Forecast> month_forecast(const State& state,
                                              const std::optional<std::string>& tenant_id,
                                              TimeMs now_ms);

}  // namespace allot::billing
