// GPU demand over time, as the instances in the state show it, and the pool sizes that a demand
// forecast calls for: what pre-scaling needs, in the daemon and in the simulator alike.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/kernel/state.h"

namespace allot {

inline constexpr TimeMs kHourMs = 3'600'000;

// Whether the instance's GPUs count towards `model`'s demand: it names the model or its family,
// or names none.
bool demands_model(const Instance& instance, const std::string& model);

// The GPUs `model` was asked for in each of `hours` hours from `from_ms`, time-weighted
// (GPU-hours per hour): by every instance that was queued or running then, from its creation to
// its end (or `now_ms`), an instance that names no model counting towards every model. One pass
// over the instances.
std::vector<double> hourly_demand(const State& state, const std::string& model, TimeMs from_ms,
                                  int hours, TimeMs now_ms);

// The GPUs of each model on live nodes that belong to no pool: they take demand before any pool.
std::map<std::string, int> standing_gpus(const State& state);

// The nodes each live pool should have for the peak GPUs the forecast expects per model: the
// `standing` GPUs of the model take the demand first, then its pools in name order (as the
// autoscaler claims work), each up to its maximum. Pools of models without a peak are left out.
std::map<std::string, int> forecast_pool_targets(const State& state,
                                                 const std::map<std::string, double>& peak_gpus,
                                                 const std::map<std::string, int>& standing);

// When the first instance of the state was created, or 0 with none: history starts there.
TimeMs first_demand_ms(const State& state);

}  // namespace allot
