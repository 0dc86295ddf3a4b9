// Hourly GPU demand from a timed pod list: what pre-scaling would have had to provide, hour by
// hour, per GPU model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace allot::sim {

inline constexpr int64_t kHourS = 3600;
// The model name that demand without a gpu_spec counts under.
inline constexpr std::string_view kAnyModel = "any";

struct Demand {
  // Per model, the GPUs requested by pods alive in each hour from the trace's second 0, as a
  // time-weighted mean over the hour (a pod of 2 GPUs alive for 15 minutes adds 0.5). A pod with
  // a gpu_spec counts under its first model, one without under kAnyModel. Only whole hours up to
  // the last deletion are kept: a partial last hour would read as a collapse of demand.
  std::map<std::string, std::vector<double>> gpus_by_model;
  std::map<std::string, int> pods_by_model;  // GPU pods counted under each model.
  std::vector<int> created;                  // GPU pods created in each hour.
  int hours = 0;
};

// The demand of every pod that asks for a GPU; CPU-only pods are left out.
Demand hourly_demand(const std::vector<TimedPod>& pods);

// The first hour that starts a day (24 hours) in which at least `pods_per_day` GPU pods were
// created, or -1 when there is none. Before it a trace may hold months of a few long-running pods
// whose flat demand would teach a forecast nothing about the daily cycle.
int first_busy_hour(const std::vector<int>& created, int pods_per_day);

}  // namespace allot::sim
