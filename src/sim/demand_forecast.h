// The simulator's demand forecast: each GPU model's hourly demand history, and the function that
// forecasts the next hours from it, used to grow pools ahead of the daily peak.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/kernel/state.h"

namespace allot::sim {

// Forecasts the next `horizon` hours of an hourly series given oldest first; never negative.
// Needs at least 48 hours of history and 1 <= horizon <= 336, else an "invalid_argument" error.
using Predictor =
    std::function<Result<std::vector<double>>(std::span<const double> history, int horizon)>;

// The forecast the simulator pre-scales with: forecast::predict (Holt-Winters with a daily season,
// src/forecast/forecast.h).
Predictor default_predictor();

// The GPUs `model` was asked for within [from_ms, to_ms), time-weighted (GPU-hours per hour): by
// every instance that was queued or running then, from its creation to its end (or `now_ms`), an
// instance that names no model counting towards every model.
double demand_between(const State& state, const std::string& model, TimeMs from_ms, TimeMs to_ms,
                      TimeMs now_ms);

}  // namespace allot::sim
