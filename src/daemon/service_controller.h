// The service controller: every interval (and at once when a request waits for a replica) it
// weighs each service's traffic as the proxy measured it, decides how many replicas it wants
// (Knative's way: a stable window, a panic window, scale to zero after a quiet spell), and keeps
// that many of the current revision running: it starts replicas as instances, rolls a new
// revision in before it drains the old one, stops a rollout whose replica never gets ready,
// replaces replicas that end with a backoff, and stops the replicas of deleted services. Every
// decision is a command, durable before it acts; what it only remembers (drains, backoffs) a new
// leader learns again in a round.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/service.h"
#include "api/service_traffic.h"

namespace allot {

struct ServiceControllerOptions {
  int64_t interval_ms = 1'000;
  int64_t drain_ms = 30'000;             // The longest a drained replica keeps its requests.
  int64_t scale_down_delay_ms = 30'000;  // How long fewer replicas must do before they go.
  int64_t spot_wait_ms = 30'000;         // A spot replica queued this long goes on-demand.
};

// What the controller remembers of one service between rounds.
struct ServiceMemory {
  std::map<std::string, TimeMs> draining;  // Replica -> since.
  std::set<std::string> known;             // Live replicas last round.
  int crashes = 0;                         // In a row, for the backoff.
  TimeMs next_start_ms = 0;
  TimeMs fewer_since_ms = 0;  // Since when fewer replicas would do; 0: not now.
  bool spot_failed = false;   // Spot capacity failed it: replicas start on-demand.
};

// How many replicas the service's traffic wants now, and why; `memory` keeps the scale-down delay.
std::pair<int, std::string> wanted_replicas(const HostedService& service,
                                            const TrafficStats& traffic, TimeMs now_ms,
                                            ServiceMemory& memory,
                                            const ServiceControllerOptions& options);

class ServiceController {
 public:
  ServiceController(Service& service, ServiceTraffic& traffic, ServiceControllerOptions options);
  ServiceController(const ServiceController&) = delete;
  ServiceController& operator=(const ServiceController&) = delete;
  ~ServiceController();

  void stop();

 private:
  void loop();
  // Runs on the core thread: one round over every service.
  void round(Context& ctx);
  // A service's replicas that are not being stopped: of the revision replicas are rolled over to
  // (`fresh`, `ready_fresh` of them ready), and of others; how many old ones are kept.
  struct Replicas {
    std::vector<const Instance*> fresh;
    std::vector<const Instance*> old;
    int ready_fresh = 0;
    int old_kept = 0;
  };

  void reconcile(Context& ctx, const HostedService& service, ServiceMemory& memory);
  // Records callers' use the proxy counted, and tells it what each caller may still spend.
  void meter(Context& ctx);
  void retire(Context& ctx, const HostedService& service);
  void count_ended(Context& ctx, const HostedService& service, ServiceMemory& memory);
  void scale(Context& ctx, const HostedService& service, ServiceMemory& memory);
  void check_deadline(Context& ctx, const HostedService& service, Replicas& replicas,
                      std::vector<std::string>& to_stop);
  void check_liveness(Context& ctx, const HostedService& service, Replicas& replicas,
                      std::vector<std::string>& to_stop, ServiceMemory& memory);
  std::vector<std::string> to_drain(Replicas& replicas, int desired) const;
  void start(Context& ctx, const HostedService& service, const ServiceRevision& revision, int count,
             ServiceMemory& memory);
  void stop_drained(Context& ctx, const std::vector<std::string>& drain,
                    std::vector<std::string> to_stop, ServiceMemory& memory);
  void publish(Context& ctx, const HostedService& service, const ServiceMemory& memory);

  Service& service_;
  ServiceTraffic& traffic_;
  ServiceControllerOptions options_;
  std::map<std::string, ServiceMemory> memory_;  // Touched on the core thread only.
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // Guarded by mutex_.
  bool woken_ = false;     // Guarded by mutex_.
  std::thread thread_;
};

}  // namespace allot
