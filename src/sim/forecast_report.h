// `allot sim forecast`: how well the demand forecast would have pre-scaled a trace's pools. Per
// GPU model, Holt-Winters and the naive forecast (same hour yesterday) are scored on the trace's
// last days, a day ahead at a time (see forecast/backtest.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "forecast/backtest.h"
#include "sim/trace.h"

namespace allot::sim {

// A day with this many GPU pods created starts the evaluated window (see first_busy_hour): the
// openb trace has at most three a day for its first 115 days and 70 to 660 a day after.
inline constexpr int kBusyPodsPerDay = 24;
// A year: more would leave no history to fit on in any trace this is meant for.
inline constexpr int kMaxHoldoutDays = 366;

struct ModelForecast {
  std::string model;
  int pods = 0;          // GPU pods counted under the model.
  double mean_gpus = 0;  // Its mean hourly demand over the window.
  forecast::Backtest backtest;
};

struct ForecastReport {
  std::string trace;  // "default" for pod_list_default.csv.
  int trace_hours = 0;
  int start_hour = 0;  // The window evaluated: from here to the trace's last whole hour.
  int holdout_days = 0;
  std::vector<ModelForecast> models;
};

// Hourly demand per model from `pods`, cut to the window from the first busy day, each backtested
// with its last `holdout_days` days held back. Fails with "invalid_argument" when holdout_days is
// outside 1..kMaxHoldoutDays, no day is busy, or the window leaves under 48 hours to fit on.
[[nodiscard]] Result<ForecastReport> forecast_trace(const std::vector<TimedPod>& pods,
                                                    int holdout_days);

// The report as JSON: errors in percent, null where no hour could be scored.
nlohmann::json to_json(const ForecastReport& report);

// The report as a table, a line per model.
std::string to_table(const ForecastReport& report);

}  // namespace allot::sim
