// Pre-scaling in allotd: each GPU model's hourly demand history, read from the instances in the
// state (so it survives restarts with them), and the peak the demand forecast expects soon, from
// which the autoscaler grows pools ahead of the daily peak.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/kernel/state.h"

namespace allot {

struct DemandHistory {
  TimeMs hour_ms = 0;  // The start of the hour it was read in: it holds the hours before.
  std::map<std::string, std::vector<double>> by_model;  // Oldest hour first.
};

// The complete hours before `now_ms`'s hour for each GPU model of the live pools: at most
// `history_h` hours, and none from before the first instance was created.
DemandHistory demand_history(const State& state, TimeMs now_ms, int history_h);

// The most GPUs the forecast expects of each model within the next `lead_h` hours. Models with
// less than 48 hours of history are left out; a forecast that fails is left out with its error in
// `errors`.
std::map<std::string, double> forecast_peaks(const DemandHistory& history, int lead_h,
                                             std::vector<std::string>& errors);

}  // namespace allot
