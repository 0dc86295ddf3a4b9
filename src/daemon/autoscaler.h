// The autoscaler: every interval it asks the core what to do (core/autoscale.h), records each
// decision durably as a command, and only then calls the pool's provider, each call on a worker
// thread of its own, so that a slow or hung script holds up no other pool. What the provider
// answers comes back as a command too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "api/service.h"
#include "core/autoscale.h"
#include "daemon/provider.h"

namespace allot {

struct AutoscalerOptions {
  int64_t interval_ms = 5'000;
  std::string server_url;  // What new nodes' agents talk to.
  ScaleOptions scale;
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
  std::thread thread_;
};

}  // namespace allot
