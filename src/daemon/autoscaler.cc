#include "daemon/autoscaler.h"

#include <future>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/pools/demand.h"
#include "daemon/prescale.h"

namespace allot {

Autoscaler::Autoscaler(Service& service, Providers providers, AutoscalerOptions options)
    : service_(service), providers_(std::move(providers)), options_(std::move(options)) {
  thread_ = std::thread([this] { loop(); });
}

Autoscaler::~Autoscaler() { stop(); }

void Autoscaler::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<std::thread> workers;
  {
    const std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (std::thread& worker : workers) worker.join();
}

void Autoscaler::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms));
    if (stopping_) break;
    lock.unlock();
    round();
    lock.lock();
  }
}

bool Autoscaler::on_core(std::function<void(Context&)> work) {
  auto committed = std::make_shared<std::promise<bool>>();
  std::future<bool> done = committed->get_future();
  service_.submit(
      [work = std::move(work)](Context& ctx) {
        work(ctx);
        return HttpResponse{.status = 200};
      },
      [committed](const HttpResponse& response) { committed->set_value(response.status == 200); });
  return done.get();
}

void Autoscaler::refresh_forecast() {
  DemandHistory history;
  bool due = false;
  if (!on_core([&](Context& ctx) {
        // Read again each hour, and whenever a pool of another model appears.
        const TimeMs now_ms = ctx.now_ms();
        std::set<std::string> models;
        for (const auto& [id, pool] : ctx.state().pools) {
          if (!pool.deleted()) models.insert(pool.gpu_model);
        }
        due = now_ms - (now_ms % kHourMs) != forecast_hour_ms_ || models != forecast_models_;
        if (!due) return;
        forecast_models_ = std::move(models);
        history = demand_history(ctx.state(), now_ms, options_.forecast_history_h);
      }) ||
      !due) {
    return;
  }
  // The fit is a grid search: it runs here, not on the core thread.
  std::vector<std::string> errors;
  peak_gpus_ = forecast_peaks(history, options_.forecast_lead_h, errors);
  forecast_hour_ms_ = history.hour_ms;
  for (const std::string& error : errors) spdlog::warn("msg=\"no forecast\" error=\"{}\"", error);
  for (const auto& [model, peak] : peak_gpus_) {
    spdlog::info("msg=\"demand forecast\" model={} peak_gpus={:.1f} lead_h={}", model, peak,
                 options_.forecast_lead_h);
  }
}

void Autoscaler::round() {
  if (options_.forecast) refresh_forecast();
  std::vector<Action> actions;
  // Provider calls only once the decisions are durable: a crash in between leaves a booting node
  // that times out, or a deleting node that is tried again, never a machine nobody knows of.
  if (!on_core([&](Context& ctx) { actions = decide(ctx); })) return;
  const std::lock_guard lock(mutex_);
  if (stopping_) return;
  for (Action& action : actions) {
    in_flight_.insert(action.call.node.id);
    workers_.emplace_back([this, a = std::move(action)]() mutable { perform(std::move(a)); });
  }
}

std::vector<Autoscaler::Action> Autoscaler::decide(Context& ctx) {
  std::vector<Action> actions;
  std::set<std::string> busy;
  {
    const std::lock_guard lock(mutex_);
    busy = in_flight_;
  }
  ScaleOptions scale = options_.scale;
  scale.forecast_nodes = forecast_pool_targets(ctx.state(), peak_gpus_, standing_gpus(ctx.state()));
  for (const ScaleDecision& d : plan_scaling(ctx.state(), ctx.now_ms(), scale)) {
    const Pool& pool = *ctx.state().pool(d.pool_id);
    if (!providers_.contains(std::string(pool_provider_name(pool.provider)))) continue;
    if (!d.pool_node_id.empty() && busy.contains(d.pool_node_id)) continue;
    auto call_for = [&](const std::string& id) {
      return ProviderCall{
          .pool = pool, .node = *ctx.state().pool_node(id), .server_url = options_.server_url};
    };
    Status ok;
    switch (d.kind) {
      case ScaleDecision::Kind::kLaunch:
        launch(ctx, d, actions);
        continue;
      case ScaleDecision::Kind::kBootTimeout:
        ok = ctx.apply(RecordPoolNode{
            .id = d.pool_node_id, .outcome = PoolNodeOutcome::kBootTimedOut, .detail = d.reason});
        if (ok)
          actions.push_back({.kind = Action::Kind::kCleanUp, .call = call_for(d.pool_node_id)});
        break;
      case ScaleDecision::Kind::kRetire:
        ok = ctx.apply(RetirePoolNode{.id = d.pool_node_id, .reason = d.reason});
        if (ok)
          actions.push_back({.kind = Action::Kind::kRemove, .call = call_for(d.pool_node_id)});
        break;
      case ScaleDecision::Kind::kDelete:
        actions.push_back({.kind = Action::Kind::kRemove, .call = call_for(d.pool_node_id)});
        break;
    }
    if (!ok) {
      spdlog::warn("msg=\"autoscaler decision refused\" pool={} error=\"{}\"", pool.name,
                   ok.error().message);
    }
  }
  return actions;
}

void Autoscaler::launch(Context& ctx, const ScaleDecision& d, std::vector<Action>& actions) {
  const Pool& pool = *ctx.state().pool(d.pool_id);
  ScaleUpPool command{.pool_id = pool.id, .reason = d.reason};
  std::vector<std::string> tokens;
  for (int i = 0; i < d.count; ++i) {
    const std::string id = ctx.ids().new_id("pnd");
    const std::string token = "allot_join_" + ctx.ids().new_secret().substr(6);
    command.launches.push_back(PoolLaunch{.pool_node_id = id,
                                          .name = pool.name + "-" + id.substr(id.size() - 8),
                                          .join_token_id = ctx.ids().new_id("jtk"),
                                          .token_hash = sha256_hex(token)});
    tokens.push_back(token);
  }
  if (auto ok = ctx.apply(command); !ok) {
    spdlog::warn("msg=\"scale-up refused\" pool={} error=\"{}\"", pool.name, ok.error().message);
    return;
  }
  spdlog::info("msg=\"scale up\" pool={} nodes={} reason=\"{}\"", pool.name, d.count, d.reason);
  for (size_t i = 0; i < tokens.size(); ++i) {
    actions.push_back(
        {.kind = Action::Kind::kCreate,
         .call = ProviderCall{.pool = pool,
                              .node = *ctx.state().pool_node(command.launches[i].pool_node_id),
                              .join_token = tokens[i],
                              .server_url = options_.server_url}});
  }
}

void Autoscaler::perform(Action action) {
  NodeProvider& provider =
      *providers_.at(std::string(pool_provider_name(action.call.pool.provider)));
  const std::string& id = action.call.node.id;
  const std::string& name = action.call.node.name;
  if (action.kind == Action::Kind::kCreate) {
    auto made = provider.create(action.call);
    if (made) {
      (void)report({.id = id, .outcome = PoolNodeOutcome::kCreated, .provider_ref = *made});
    } else {
      spdlog::warn("msg=\"node create failed\" node={} error=\"{}\"", name, made.error().message);
      const auto now = report(
          {.id = id, .outcome = PoolNodeOutcome::kCreateFailed, .detail = made.error().message});
      // Whatever it made halfway goes, unless the node joined after all.
      if (now == PoolNodeState::kFailed) action.kind = Action::Kind::kCleanUp;
    }
  }
  if (action.kind != Action::Kind::kCreate) {
    const Status removed = provider.remove(action.call);
    if (!removed) {
      spdlog::warn("msg=\"node delete failed\" node={} error=\"{}\"", name,
                   removed.error().message);
    }
    // A failed boot's clean-up is logged; a retired node's deletion is recorded and retried.
    if (action.kind == Action::Kind::kRemove) {
      (void)report(removed ? RecordPoolNode{.id = id, .outcome = PoolNodeOutcome::kDeleted}
                           : RecordPoolNode{.id = id,
                                            .outcome = PoolNodeOutcome::kDeleteFailed,
                                            .detail = removed.error().message});
    }
  }
  const std::lock_guard lock(mutex_);
  in_flight_.erase(id);
}

std::optional<PoolNodeState> Autoscaler::report(RecordPoolNode record) {
  std::optional<PoolNodeState> after;
  (void)on_core([&](Context& ctx) {
    if (auto ok = ctx.apply(record); !ok) {
      spdlog::warn("msg=\"pool node record refused\" id={} error=\"{}\"", record.id,
                   ok.error().message);
    }
    if (const PoolNode* node = ctx.state().pool_node(record.id)) after = node->state;
  });
  return after;
}

}  // namespace allot
