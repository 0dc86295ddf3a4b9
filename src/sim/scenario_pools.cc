#include "sim/scenario_pools.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/gpu_models.h"
#include "sim/replay.h"
#include "sim/scenario_fields.h"

namespace allot::sim {
namespace {

using nlohmann::json;

constexpr int64_t kDayS = 86'400;
constexpr int64_t kHourS = 3'600;

bool pool_name_ok(const std::string& name) {
  return name.size() <= 40 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
         });
}

Result<ScenarioPool> pool_at(const json& doc, size_t index) {
  const std::string where = fmt::format("pools[{}]", index);
  if (!doc.is_object()) return std::unexpected(bad(where, "must be an object"));
  const Fields f(doc, where);
  ScenarioPool p;
  TRY(name, f.text("name"));
  if (!pool_name_ok(name)) {
    return std::unexpected(bad(f.at("name"), "1 to 40 letters, digits and '-'"));
  }
  TRY(model, f.text("model"));
  if (!is_catalog_gpu_model(model)) {
    return std::unexpected(bad(f.at("model"), "unknown GPU model " + model));
  }
  TRY(region, f.text("region"));
  TRY(min, f.integer("min", 0, 0, limits::kMaxPoolNodes));
  TRY(max, f.integer("max", std::nullopt, 0, limits::kMaxPoolNodes));
  if (min > max) {
    return std::unexpected(bad(f.at("max"), fmt::format("must be at least min ({})", min)));
  }
  TRY(gpus, f.integer("gpus_per_node", 8, 1, 16));
  TRY(cpu, f.integer("cpu_milli", p.pool.cpu_milli, 0, limits::kMaxPoolCpuMilli));
  TRY(memory, f.integer("memory_mib", p.pool.memory_mib, 0, limits::kMaxPoolMemoryMib));
  TRY(boot, f.integer("boot_s", p.boot_s, 0, kDayS));
  TRY(boot_timeout, f.integer("boot_timeout_s", p.pool.boot_timeout_ms / 1000, 1, kDayS));
  TRY(idle, f.integer("idle_timeout_s", p.pool.idle_timeout_ms / 1000, 1, kDayS));
  TRY(cooldown, f.integer("cooldown_s", p.pool.cooldown_ms / 1000, 0, kDayS));
  p.pool.name = name;
  p.pool.gpu_model = model;
  p.pool.region = region;
  p.pool.min_nodes = static_cast<int>(min);
  p.pool.max_nodes = static_cast<int>(max);
  p.pool.gpus_per_node = static_cast<int>(gpus);
  p.pool.cpu_milli = cpu;
  p.pool.memory_mib = memory;
  p.pool.boot_timeout_ms = boot_timeout * 1000;
  p.pool.idle_timeout_ms = idle * 1000;
  p.pool.cooldown_ms = cooldown * 1000;
  p.boot_s = boot;
  return p;
}

Result<ScenarioForecast> forecast_at(const json& doc) {
  ScenarioForecast out;
  if (!doc.contains("forecast")) return out;
  const Fields f(doc.at("forecast"), "forecast");
  if (!f.doc().is_object()) return std::unexpected(bad("forecast", "must be an object"));
  TRY(enabled, f.flag("enabled"));
  TRY(compare, f.flag("compare"));
  TRY(lead, f.integer("lead_h", out.lead_h, 1, 24));
  // The forecast needs two days of history and looks at most two weeks back.
  TRY(history, f.integer("history_h", out.history_h, 48, int64_t{24} * 14));
  out.enabled = enabled;
  out.compare = compare;
  out.lead_h = static_cast<int>(lead);
  out.history_h = static_cast<int>(history);
  return out;
}

// One generator's settings.
struct Generator {
  std::string where;  // "workload" or "workload[1]": prefixes its instance ids too.
  uint64_t seed = 0;
  int64_t from_s = 0;
  int64_t days = 0;
  int64_t peak = 0;    // Jobs per hour at the peak hour.
  int64_t trough = 0;  // Jobs per hour 12 hours from it.
  int64_t peak_hour = 0;
  std::vector<int64_t> gpu_weights;  // For 1, 2, 4 and 8 GPUs.
  int64_t run_mean_s = 0;
  int64_t run_range_s = 0;
  ScenarioEvent submit;  // The template of each submit.
};

Result<std::vector<int64_t>> gpu_weights_at(const Fields& f) {
  if (!f.has("gpus")) return std::vector<int64_t>{1, 0, 0, 0};
  const json& list = f.doc().at("gpus");
  const auto wrong = [&] {
    return std::unexpected(bad(f.at("gpus"), "must be 4 whole weights, for 1, 2, 4 and 8 GPUs"));
  };
  if (!list.is_array() || list.size() != 4) return wrong();
  std::vector<int64_t> weights;
  weights.reserve(4);
  for (const json& w : list) {
    if (!w.is_number_integer() || w.get<int64_t>() < 0 || w.get<int64_t>() > 1'000'000) {
      return wrong();
    }
    weights.push_back(w.get<int64_t>());
  }
  if (weights[0] + weights[1] + weights[2] + weights[3] == 0) return wrong();
  return weights;
}

Status run_time_at(const Fields& f, Generator& g) {
  if (!f.has("run_s") || !f.doc().at("run_s").is_object()) {
    return std::unexpected(bad(f.at("run_s"), "required: {\"mean\": SECONDS, \"range\": SECONDS}"));
  }
  const Fields r(f.doc().at("run_s"), f.at("run_s"));
  TRY(mean, r.integer("mean", std::nullopt, 1, kDayS * 30));
  TRY(range, r.integer("range", 0, 0, mean - 1));
  g.run_mean_s = mean;
  g.run_range_s = range;
  return {};
}

Result<Generator> generator_at(const Fields& f, const std::set<std::string>& tenants) {
  Generator g{.where = f.where()};
  TRY(seed, f.integer("seed", std::nullopt, 0, INT64_MAX));
  TRY(from, f.integer("start", 0, 0, kMaxSeconds));
  TRY(days, f.integer("days", std::nullopt, 1, 366));
  TRY(peak, f.integer("jobs_per_hour_peak", std::nullopt, 0, kHourS));
  TRY(trough, f.integer("jobs_per_hour_trough", 0, 0, peak));
  TRY(peak_hour, f.integer("peak_hour_utc", 14, 0, 23));
  TRY(weights, gpu_weights_at(f));
  if (auto ok = run_time_at(f, g); !ok) return std::unexpected(ok.error());
  TRY(tenant, f.text("tenant"));
  if (!tenants.contains(tenant)) return std::unexpected(bad(f.at("tenant"), "unknown tenant"));
  TRY(project, f.text("project", "default"));
  TRY(region, f.text("region", ""));
  g.seed = static_cast<uint64_t>(seed);
  g.from_s = from;
  g.days = days;
  g.peak = peak;
  g.trough = trough;
  g.peak_hour = peak_hour;
  g.gpu_weights = weights;
  g.submit = ScenarioEvent{.kind = EventKind::kSubmit, .tenant = tenant, .project = project};
  g.submit.spec.region = region;
  g.submit.spec.command = {"sim"};
  if (f.has("model")) {
    TRY(model, f.text("model"));
    if (!is_known_gpu_model(model)) return std::unexpected(bad(f.at("model"), "unknown GPU model"));
    g.submit.spec.gpu_models = {model};
  }
  return g;
}

// Expected jobs in the hour, in thousandths: the peak at the peak hour, falling in a straight
// line to the trough 12 hours from it (whole numbers, so that every platform draws the same).
int64_t rate_milli(const Generator& g, TimeMs hour_start_ms) {
  const int64_t hour = (hour_start_ms / 1000 / kHourS) % 24;
  const int64_t apart = std::abs(hour - g.peak_hour);
  const int64_t distance = std::min(apart, 24 - apart);  // 0 to 12.
  return (g.trough * 1000) + ((g.peak - g.trough) * 1000 * (12 - distance) / 12);
}

int gpus_drawn(const Generator& g, std::mt19937_64& rng) {
  int64_t total = 0;
  for (int64_t w : g.gpu_weights) total += w;
  int64_t draw = static_cast<int64_t>(draw_below(rng, static_cast<uint64_t>(total)));
  constexpr int kGpus[] = {1, 2, 4, 8};
  for (size_t i = 0; i < 4; ++i) {
    if (draw < g.gpu_weights[i]) return kGpus[i];
    draw -= g.gpu_weights[i];
  }
  return 8;
}

// Each second a job arrives with probability rate / 3600 (at most one a second), so each hour's
// count is binomial, close to Poisson at these rates.
std::vector<ScenarioEvent> generate(const Generator& g, TimeMs start_ms) {
  std::mt19937_64 rng(g.seed);
  std::vector<ScenarioEvent> out;
  const int64_t end_s = g.from_s + (g.days * kDayS);
  for (int64_t t = g.from_s; t < end_s; ++t) {
    const TimeMs now_ms = start_ms + (t * 1000);
    const int64_t rate = rate_milli(g, now_ms - (now_ms % (kHourS * 1000)));
    if (static_cast<int64_t>(draw_below(rng, kHourS * 1000)) >= rate) continue;
    ScenarioEvent e = g.submit;
    e.at_s = t;
    e.id = fmt::format("{}-{:06}", g.where, out.size() + 1);
    e.where = e.id;
    e.spec.gpus = gpus_drawn(g, rng);
    e.run_s = g.run_mean_s - g.run_range_s +
              static_cast<int64_t>(draw_below(rng, static_cast<uint64_t>(2 * g.run_range_s) + 1));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Status parse_pools(const json& doc, Scenario& s) {
  std::set<std::string> names;
  auto pools = each_of(doc, "pools", [&](const json& p, size_t i) -> Status {
    TRY(spec, pool_at(p, i));
    if (!names.insert(spec.pool.name).second) {
      return std::unexpected(bad(fmt::format("pools[{}].name", i), "duplicate " + spec.pool.name));
    }
    s.pools.push_back(spec);
    return {};
  });
  if (!pools) return pools;
  const Fields f(doc, "scenario");
  TRY(interval, f.integer("autoscale_interval_s", s.autoscale_interval_s, 1, kHourS));
  s.autoscale_interval_s = interval;
  TRY(forecast, forecast_at(doc));
  s.forecast = forecast;
  return {};
}

Status parse_workloads(const json& doc, Scenario& s) {
  if (!doc.contains("workload")) return {};
  std::set<std::string> tenants;
  for (const ScenarioTenant& t : s.tenants) tenants.insert(t.name);
  const json& w = doc.at("workload");
  const bool list = w.is_array();
  const size_t count = list ? w.size() : 1;
  for (size_t i = 0; i < count; ++i) {
    const json& item = list ? w[i] : w;
    const std::string where = list ? fmt::format("workload[{}]", i) : "workload";
    if (!item.is_object()) return std::unexpected(bad(where, "must be an object"));
    TRY(g, generator_at(Fields(item, where), tenants));
    std::vector<ScenarioEvent> submits = generate(g, s.start_ms);
    s.workloads.push_back({.seed = g.seed, .jobs = static_cast<int64_t>(submits.size())});
    for (ScenarioEvent& e : submits) s.events.push_back(std::move(e));
  }
  return {};
}

}  // namespace allot::sim
