#include "sim/forecast_report.h"

#include <numeric>

#include <fmt/format.h>

#include "sim/demand.h"

namespace allot::sim {
namespace {

nlohmann::json percent_json(const std::optional<double>& percent) {
  return percent ? nlohmann::json(*percent) : nlohmann::json(nullptr);
}

nlohmann::json score_json(const forecast::MethodScore& score) {
  return {{"mape_pct", percent_json(score.mape.percent)},
          {"mape_hours", score.mape.hours},
          {"mape_skipped_zero_hours", score.mape.skipped_hours},
          {"wape_pct", percent_json(score.wape.percent)},
          {"wape_hours", score.wape.hours}};
}

std::string percent_text(const std::optional<double>& percent) {
  return percent ? fmt::format("{:.2f}%", *percent) : std::string("-");
}

}  // namespace

Result<ForecastReport> forecast_trace(const std::vector<TimedPod>& pods, int holdout_days) {
  if (holdout_days < 1 || holdout_days > kMaxHoldoutDays) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("--holdout-days {}: want 1 to {}", holdout_days, kMaxHoldoutDays));
  }
  const Demand demand = hourly_demand(pods);
  const int start = first_busy_hour(demand.created, kBusyPodsPerDay);
  if (start < 0) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("no day of the trace has {} GPU pods created", kBusyPodsPerDay));
  }
  ForecastReport report{
      .trace_hours = demand.hours, .start_hour = start, .holdout_days = holdout_days};
  for (const auto& [model, series] : demand.gpus_by_model) {
    const std::span<const double> window = std::span(series).subspan(static_cast<size_t>(start));
    Result<forecast::Backtest> backtest =
        forecast::backtest(window, holdout_days * forecast::kSeasonHours);
    if (!backtest) {
      return fail(backtest.error().code, fmt::format("model {}, hours {} to {}: {}", model, start,
                                                     demand.hours, backtest.error().message));
    }
    const double total = std::accumulate(window.begin(), window.end(), 0.0);
    report.models.push_back(ModelForecast{.model = model,
                                          .pods = demand.pods_by_model.at(model),
                                          .mean_gpus = total / static_cast<double>(window.size()),
                                          .backtest = std::move(*backtest)});
  }
  return report;
}

nlohmann::json to_json(const ForecastReport& report) {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelForecast& model : report.models) {
    const forecast::Backtest& backtest = model.backtest;
    models.push_back({{"model", model.model},
                      {"pods", model.pods},
                      {"mean_gpus", model.mean_gpus},
                      {"fitted_hours", backtest.fitted_hours},
                      {"holdout_hours", backtest.holdout_hours},
                      {"params",
                       {{"alpha", backtest.params.alpha},
                        {"beta", backtest.params.beta},
                        {"gamma", backtest.params.gamma},
                        {"phi", backtest.params.phi},
                        {"seasonality", forecast::seasonality_name(backtest.params.seasonality)}}},
                      {"refits", backtest.refits},
                      {"holt_winters", score_json(backtest.holt_winters)},
                      {"naive", score_json(backtest.naive)}});
  }
  return {{"trace", report.trace},
          {"trace_hours", report.trace_hours},
          {"start_hour", report.start_hour},
          {"holdout_days", report.holdout_days},
          {"models", std::move(models)}};
}

std::string to_table(const ForecastReport& report) {
  std::string out = fmt::format(
      "trace {}: hourly GPU demand from hour {} (the first day with {} GPU pods created) to hour "
      "{}; the last {} days held back, forecast a day ahead at a time\n",
      report.trace, report.start_hour, kBusyPodsPerDay, report.trace_hours, report.holdout_days);
  out += fmt::format("{:<9} {:>5} {:>9} {:>7} {:>9} {:>9} {:>9} {:>10} {:>10}  {}\n", "model",
                     "pods", "mean GPUs", "fitted", "held back", "HW MAPE", "HW WAPE", "naive MAPE",
                     "naive WAPE", "parameters (alpha beta gamma phi season)");
  for (const ModelForecast& model : report.models) {
    const forecast::Backtest& b = model.backtest;
    out +=
        fmt::format("{:<9} {:>5} {:>9.2f} {:>7} {:>9} {:>9} {:>9} {:>10} {:>10}  {} {} {} {} {}",
                    model.model, model.pods, model.mean_gpus, b.fitted_hours, b.holdout_hours,
                    percent_text(b.holt_winters.mape.percent),
                    percent_text(b.holt_winters.wape.percent), percent_text(b.naive.mape.percent),
                    percent_text(b.naive.wape.percent), b.params.alpha, b.params.beta,
                    b.params.gamma, b.params.phi, forecast::seasonality_name(b.params.seasonality));
    if (b.holt_winters.mape.skipped_hours > 0) {
      out += fmt::format(" ({} hours of 0 demand left out of MAPE)",
                         b.holt_winters.mape.skipped_hours);
    }
    if (b.refits > 0) out += fmt::format(" ({} days refitted)", b.refits);
    out += "\n";
  }
  return out;
}

}  // namespace allot::sim
