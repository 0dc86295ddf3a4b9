// The autoscaler: every interval it asks the core what to do (core/pools/autoscale.h), records each
// decision durably as a command, and only then calls the pool's provider, each call on a worker
// thread of its own, so that a slow or hung script holds up no other pool. What the provider
// answers comes back as a command too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "api/service.h"
#include "core/pools/autoscale.h"
#include "daemon/provider.h"

namespace allot {

struct AutoscalerOptions {
  int64_t interval_ms = 5'000;
  std::string server_url;  // What new nodes' agents talk to.
  ScaleOptions scale;
  // Pre-scaling: once an hour the demand history is read and forecast `forecast_lead_h` hours
  // ahead, and the pools of each model grow to what the forecast peak needs (daemon/prescale.h).
  bool forecast = true;
  int forecast_lead_h = 2;
  int forecast_history_h = 336;
};

class Autoscaler {
 public:
  Autoscaler(Service& service, Providers providers, AutoscalerOptions options);
  Autoscaler(const Autoscaler&) = delete;
  Autoscaler& operator=(const Autoscaler&) = delete;
  ~Autoscaler();

  // Stops deciding and waits for the provider calls in flight.
  void stop();

 private:
  struct Action {
    enum class Kind { kCreate, kRemove, kCleanUp };
    Kind kind = Kind::kCreate;
    ProviderCall call;
  };

  void loop();
  void round();
  // Runs `work` on the core thread and waits for it; false when its batch was not made durable.
  bool on_core(std::function<void(Context&)> work);
  // At the first round of each hour: the forecast peaks from the demand history.
  void refresh_forecast();
  // Runs on the core thread: the decisions, applied as commands; returns the provider calls.
  std::vector<Action> decide(Context& ctx);
  void launch(Context& ctx, const ScaleDecision& d, std::vector<Action>& actions);
  void perform(Action action);
  // Records a provider's answer durably; the pool node's state after it.
  std::optional<PoolNodeState> report(RecordPoolNode record);

  Service& service_;
  Providers providers_;
  AutoscalerOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;             // Guarded by mutex_.
  std::set<std::string> in_flight_;   // Pool node ids with a provider call running; mutex_.
  std::vector<std::thread> workers_;  // Guarded by mutex_.
  // The forecast: the hour it was made in, and each model's expected peak GPUs. Only the
  // autoscaler's thread writes them, while no decision is running; decide() reads them.
  TimeMs forecast_hour_ms_ = 0;
  std::set<std::string> forecast_models_;
  std::map<std::string, double> peak_gpus_;
  std::thread thread_;
};

}  // namespace allot
