// Holt-Winters with a damped trend and a 24-hour season, additive or multiplicative, and the
// grid search that chooses its parameters.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "forecast/forecast.h"
#include "forecast/validate.h"

namespace allot::forecast {
namespace {

// Only the last 8 weeks are smoothed while choosing parameters, which bounds the grid's cost
// (each point reruns the series) whatever the history's length. The level forgets within days at
// the grid's alphas, and 8 weeks update each hour's season 56 times.
constexpr size_t kFitWindowHours = size_t{8} * 7 * kSeasonHours;
// One-step errors are scored over at most the last week: recent enough to follow the current
// regime, long enough to hold seven daily peaks.
constexpr size_t kMaxScoredHours = size_t{7} * kSeasonHours;

constexpr std::array kAlphas = {0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9};
constexpr std::array kBetas = {0.0, 0.01, 0.05, 0.1, 0.2};
constexpr std::array kGammas = {0.01, 0.05, 0.1, 0.2, 0.4};
constexpr std::array kPhis = {0.8, 0.9, 0.95, 0.98, 1.0};

// The smoothed state after some hours; `season[t % 24]` belongs to the hour t counted from the
// first hour smoothed.
struct State {
  double level = 0;
  double trend = 0;
  std::array<double, kSeasonHours> season{};
  size_t hours = 0;  // Hours seen, including the first season.
};

double mean(std::span<const double> values) {
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

// The state after the first season, estimated from the first two: the trend is the change of the
// daily mean per hour, and each hour's season is its distance (or ratio) from the trend line, so
// that an exact cycle on an exact line is taken up with no error. Empty when a multiplicative
// season would divide by a line at or below 0.
std::optional<State> initial_state(std::span<const double> history, Seasonality seasonality) {
  const double first = mean(history.first(kSeasonHours));
  const double second = mean(history.subspan(kSeasonHours, kSeasonHours));
  State state;
  state.trend = (second - first) / kSeasonHours;
  const double middle = (kSeasonHours - 1) / 2.0;
  for (int hour = 0; hour < kSeasonHours; ++hour) {
    const double line = first + (hour - middle) * state.trend;
    if (seasonality == Seasonality::kAdditive) {
      state.season[hour] = history[hour] - line;
    } else {
      if (line <= 0) return std::nullopt;
      state.season[hour] = history[hour] / line;
    }
  }
  state.level = first + middle * state.trend;
  state.hours = kSeasonHours;
  return state;
}

// The forecast `ahead` hours past the state (1: the next hour), before clamping.
double forecast_at(const State& state, const Params& params, size_t ahead) {
  double damped = 0;
  double factor = 1;
  for (size_t i = 0; i < ahead; ++i) {
    factor *= params.phi;
    damped += factor;
  }
  const double base = state.level + damped * state.trend;
  const double season = state.season[(state.hours + ahead - 1) % kSeasonHours];
  return params.seasonality == Seasonality::kAdditive ? base + season : base * season;
}

// Takes in the next hour. False when a multiplicative level falls to 0 or below, after which
// the season would divide by it.
bool step(State& state, const Params& params, double actual) {
  double& season = state.season[state.hours % kSeasonHours];
  const double previous = state.level + params.phi * state.trend;
  const double previous_level = state.level;
  if (params.seasonality == Seasonality::kAdditive) {
    state.level = params.alpha * (actual - season) + (1 - params.alpha) * previous;
    season = params.gamma * (actual - state.level) + (1 - params.gamma) * season;
  } else {
    state.level = params.alpha * (actual / season) + (1 - params.alpha) * previous;
    if (!(state.level > 0) || !std::isfinite(state.level)) return false;
    season = params.gamma * (actual / state.level) + (1 - params.gamma) * season;
  }
  state.trend =
      params.beta * (state.level - previous_level) + (1 - params.beta) * params.phi * state.trend;
  ++state.hours;
  return true;
}

// The mean absolute one-step error over the last `scored` hours of `history`, or infinity when
// the parameters cannot smooth it.
double one_step_error(std::span<const double> history, const Params& params, size_t scored) {
  std::optional<State> state = initial_state(history, params.seasonality);
  if (!state) return std::numeric_limits<double>::infinity();
  const size_t scored_from = history.size() - scored;
  double error = 0;
  for (size_t t = kSeasonHours; t < history.size(); ++t) {
    if (t >= scored_from) error += std::abs(forecast_at(*state, params, 1) - history[t]);
    if (!step(*state, params, history[t])) return std::numeric_limits<double>::infinity();
  }
  const double result = error / static_cast<double>(scored);
  return std::isfinite(result) ? result : std::numeric_limits<double>::infinity();
}

Status check_params(const Params& params) {
  const auto in_unit = [](double value, bool zero_ok) {
    return std::isfinite(value) && value <= 1 && (zero_ok ? value >= 0 : value > 0);
  };
  if (!in_unit(params.alpha, false) || !in_unit(params.beta, true) ||
      !in_unit(params.gamma, false) || !in_unit(params.phi, false)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("parameters alpha {} beta {} gamma {} phi {} out of range (alpha, "
                            "gamma and phi in (0, 1], beta in [0, 1])",
                            params.alpha, params.beta, params.gamma, params.phi));
  }
  return {};
}

}  // namespace

std::string_view seasonality_name(Seasonality seasonality) {
  return seasonality == Seasonality::kAdditive ? "additive" : "multiplicative";
}

Result<Params> fit(std::span<const double> history) {
  if (Status valid = check_history(history, kMinHistoryHours); !valid) {
    return std::unexpected(valid.error());
  }
  const std::span<const double> window = history.last(std::min(history.size(), kFitWindowHours));
  const size_t scored = std::min(kMaxScoredHours, (window.size() - kSeasonHours) / 2);
  std::vector<Seasonality> seasonalities = {Seasonality::kAdditive};
  if (std::ranges::all_of(window, [](double value) { return value > 0; })) {
    seasonalities.push_back(Seasonality::kMultiplicative);
  }
  Params best;
  double best_error = std::numeric_limits<double>::infinity();
  for (Seasonality seasonality : seasonalities) {
    for (double alpha : kAlphas) {
      for (double beta : kBetas) {
        for (double gamma : kGammas) {
          for (double phi : kPhis) {
            const Params params{alpha, beta, gamma, phi, seasonality};
            const double error = one_step_error(window, params, scored);
            if (error < best_error) {
              best = params;
              best_error = error;
            }
          }
        }
      }
    }
  }
  // The additive season never divides, so some point of the grid always smooths a valid history.
  return best;
}

Result<std::vector<double>> predict_with(std::span<const double> history, const Params& params,
                                         int horizon) {
  if (Status valid = check_history(history, kMinHistoryHours); !valid) {
    return std::unexpected(valid.error());
  }
  if (Status valid = check_horizon(horizon); !valid) return std::unexpected(valid.error());
  if (Status valid = check_params(params); !valid) return std::unexpected(valid.error());
  std::optional<State> state = initial_state(history, params.seasonality);
  bool smoothed = state.has_value();
  for (size_t t = kSeasonHours; smoothed && t < history.size(); ++t) {
    smoothed = step(*state, params, history[t]);
  }
  if (!smoothed) {
    return fail(ErrorCode::kInvalidArgument,
                "the multiplicative season needs a level above 0, and this history's falls to 0");
  }
  std::vector<double> forecast;
  forecast.reserve(static_cast<size_t>(horizon));
  for (int ahead = 1; ahead <= horizon; ++ahead) {
    const double value = forecast_at(*state, params, static_cast<size_t>(ahead));
    // Only a history near the largest double can get here; a made-up number would be worse.
    if (!std::isfinite(value)) {
      return fail(ErrorCode::kInvalidArgument, "the history is too large to forecast");
    }
    forecast.push_back(std::max(0.0, value));
  }
  return forecast;
}

Result<std::vector<double>> predict(std::span<const double> history, int horizon) {
  if (Status valid = check_horizon(horizon); !valid) return std::unexpected(valid.error());
  Result<Params> params = fit(history);
  if (!params) return std::unexpected(params.error());
  return predict_with(history, *params, horizon);
}

}  // namespace allot::forecast
