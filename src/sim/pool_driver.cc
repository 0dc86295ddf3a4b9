#include "sim/pool_driver.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/random.h"
#include "core/pools/demand.h"
#include "core/pools/pools.h"

namespace allot::sim {
PoolDriver::PoolDriver(const Scenario& s, bool forecast, Predictor predictor, NextId next_id)
    : s_(s), forecast_(forecast), predictor_(std::move(predictor)), next_id_(std::move(next_id)) {}

std::vector<std::pair<Command, std::string>> PoolDriver::setup() {
  std::vector<std::pair<Command, std::string>> out;
  out.reserve(s_.pools.size());
  for (size_t i = 0; i < s_.pools.size(); ++i) {
    Pool pool = s_.pools[i].pool;
    pool.id = next_id_("pol");
    pool_ids_[pool.name] = pool.id;
    std::string where = fmt::format("pools[{}] ({})", i, pool.name);
    out.emplace_back(CreatePool{std::move(pool)}, std::move(where));
  }
  return out;
}

int64_t PoolDriver::next_after(int64_t t) const {
  int64_t next = (t / s_.autoscale_interval_s + 1) * s_.autoscale_interval_s;
  if (auto it = joins_.upper_bound(t); it != joins_.end()) next = std::min(next, it->first);
  return next;
}

std::vector<PoolJoin> PoolDriver::joins_due(const State& state, int64_t t, TimeMs now_ms) {
  std::vector<PoolJoin> out;
  while (!joins_.empty() && joins_.begin()->first <= t) {
    const Pending pending = joins_.begin()->second;
    joins_.erase(joins_.begin());
    const PoolNode* pn = state.pool_node(pending.pool_node_id);
    // A node whose boot timed out is cleaned up by its provider and never joins.
    if (pn == nullptr || pn->state != PoolNodeState::kBooting ||
        now_ms - pn->requested_at_ms >= pending.boot_timeout_ms) {
      continue;
    }
    const Pool& pool = *state.pool(pn->pool_id);
    const auto [idle_w, busy_w] = default_gpu_power(pool.gpu_model);
    PoolJoin join{.command = JoinNode{.node_id = next_id_("nod"),
                                      .join_token_hash = sha256_hex(pn->id),
                                      .credential_hash = sha256_hex(pn->name),
                                      .name = pn->name,
                                      .region = pool.region,
                                      .cpu_milli = pool.cpu_milli,
                                      .memory_mib = pool.memory_mib,
                                      .backend = "simulated"},
                  .node = ScenarioNode{.name = pn->name,
                                       .region = pool.region,
                                       .gpus = pool.gpus_per_node,
                                       .model = pool.gpu_model,
                                       .idle_w = idle_w,
                                       .busy_w = busy_w}};
    for (int i = 0; i < pool.gpus_per_node; ++i) {
      join.command.gpus.push_back(GpuReport{
          .index = i, .uuid = fmt::format("{}-gpu-{}", pn->name, i), .model = pool.gpu_model});
    }
    out.push_back(std::move(join));
  }
  return out;
}

ScaleOptions PoolDriver::options() const { return ScaleOptions{.forecast_nodes = targets_}; }

void PoolDriver::launch(const State& state, const ScaleDecision& d, int64_t t,
                        std::vector<Command>& out) {
  const Pool& pool = *state.pool(d.pool_id);
  const ScenarioPool& spec =
      *std::find_if(s_.pools.begin(), s_.pools.end(),
                    [&](const ScenarioPool& p) { return p.pool.name == pool.name; });
  ScaleUpPool command{.pool_id = pool.id, .reason = d.reason};
  std::vector<Command> created;
  for (int i = 0; i < d.count; ++i) {
    const std::string id = next_id_("pnd");
    const std::string name = pool.name + "-" + id.substr(id.size() - 8);
    command.launches.push_back(PoolLaunch{.pool_node_id = id,
                                          .name = name,
                                          .join_token_id = next_id_("jtk"),
                                          .token_hash = sha256_hex(id)});
    created.emplace_back(RecordPoolNode{
        .id = id, .outcome = PoolNodeOutcome::kCreated, .provider_ref = "sim-" + name});
    joins_.emplace(t + spec.boot_s,
                   Pending{.pool_node_id = id, .boot_timeout_ms = spec.pool.boot_timeout_ms});
  }
  out.emplace_back(std::move(command));
  for (Command& c : created) out.push_back(std::move(c));
}

std::vector<Command> PoolDriver::round(const State& state, int64_t t, TimeMs now_ms) {
  std::vector<Command> out;
  if (t % s_.autoscale_interval_s != 0) return out;
  for (const ScaleDecision& d : plan_scaling(state, now_ms, options())) {
    switch (d.kind) {
      case ScaleDecision::Kind::kLaunch:
        launch(state, d, t, out);
        break;
      case ScaleDecision::Kind::kBootTimeout:
        out.emplace_back(RecordPoolNode{
            .id = d.pool_node_id, .outcome = PoolNodeOutcome::kBootTimedOut, .detail = d.reason});
        break;
      case ScaleDecision::Kind::kRetire: {
        out.emplace_back(RetirePoolNode{.id = d.pool_node_id, .reason = d.reason});
        out.emplace_back(
            RecordPoolNode{.id = d.pool_node_id, .outcome = PoolNodeOutcome::kDeleted});
        break;
      }
      case ScaleDecision::Kind::kDelete:
        out.emplace_back(
            RecordPoolNode{.id = d.pool_node_id, .outcome = PoolNodeOutcome::kDeleted});
        break;
    }
  }
  return out;
}

Status PoolDriver::hour(const State& state, TimeMs now_ms) {
  if (!forecast_) return {};
  const TimeMs from_ms = std::max(s_.start_ms, now_ms - kHourMs);
  std::map<std::string, double> peaks;
  for (const ScenarioPool& spec : s_.pools) {
    const std::string& model = spec.pool.gpu_model;
    if (peaks.contains(model)) continue;
    std::vector<double>& history = history_[model];
    history.push_back(demand_between(state, model, from_ms, now_ms, now_ms));
    if (history.size() < 48) continue;
    const size_t keep = std::min(history.size(), static_cast<size_t>(s_.forecast.history_h));
    auto forecast = predictor_(std::span<const double>(history).last(keep), s_.forecast.lead_h);
    if (!forecast) {
      return std::unexpected(Error{forecast.error().code, fmt::format("forecast of {}: {}", model,
                                                                      forecast.error().message)});
    }
    peaks[model] = *std::max_element(forecast->begin(), forecast->end());
  }
  if (!peaks.empty()) ++forecasts_;
  set_targets(state, peaks);
  return {};
}

void PoolDriver::set_targets(const State& state, const std::map<std::string, double>& peak_gpus) {
  // The scenario's own nodes of the model take the demand first.
  std::map<std::string, int> standing;
  for (const ScenarioNode& n : s_.nodes) standing[n.model] += n.gpus;
  targets_ = forecast_pool_targets(state, peak_gpus, standing);
  for (const auto& [id, nodes] : targets_) {
    const std::string& name = state.pool(id)->name;
    largest_target_[name] = std::max(largest_target_[name], nodes);
  }
}

nlohmann::json PoolDriver::summary() const {
  nlohmann::json largest = nlohmann::json::object();
  for (const auto& [name, nodes] : largest_target_) largest[name] = nodes;
  return {{"enabled", forecast_},
          {"lead_h", s_.forecast.lead_h},
          {"history_h", s_.forecast.history_h},
          {"hours_forecast", forecasts_},
          {"largest_target_nodes", largest}};
}

}  // namespace allot::sim
