// What allotd knows of services' replicas and traffic between the controller, the proxy and the
// prober: the endpoints each service may be served by (from the controller), each replica's
// health (from the prober) and requests in flight (from the proxy), and each service's traffic
// (requests per second and concurrency, over a stable and a panic window) that the autoscaler
// reads. Safe from any thread; held in memory only, since a new leader measures afresh.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/service_meter.h"
#include "common/clock.h"

namespace allot {

// A replica the proxy may send requests to.
struct Endpoint {
  std::string instance_id;
  std::string node_id;  // Empty while it is not running.
  int port = 0;
  int revision = 0;
  std::string readiness;  // The path its readiness probe asks for.
  bool draining = false;  // Being taken away: no new requests.
};

// What the proxy finds a service by: its id, or its tenant's name or model for it.
struct ServiceRoute {
  std::string id;
  std::string tenant_id;
  std::string name;
  std::string model;
  bool shared = false;  // Other tenants' caller keys reach it.
  bool priced = false;  // It charges other tenants per request or per token.
  // What a call may cost, for the hold it takes: the higher of the prices now and a rise that
  // has been announced.
  int64_t price_per_request_micros = 0;
  int64_t price_per_1k_tokens_micros = 0;

  static ServiceRoute of(const HostedService& service) {
    const int64_t per_request =
        std::max(service.price_per_request_micros, service.rising_price_per_request_micros);
    const int64_t per_1k_tokens =
        std::max(service.price_per_1k_tokens_micros, service.rising_price_per_1k_tokens_micros);
    return ServiceRoute{.id = service.id,
                        .tenant_id = service.tenant_id,
                        .name = service.name,
                        .model = service.model,
                        .shared = service.shared,
                        .priced = per_request > 0 || per_1k_tokens > 0,
                        .price_per_request_micros = per_request,
                        .price_per_1k_tokens_micros = per_1k_tokens};
  }
};

struct ReplicaHealth {
  bool ready = false;
  TimeMs ready_since_ms = 0;
  int outstanding = 0;  // Requests it is answering now.
  int64_t served = 0;
  int64_t failures = 0;  // Probes and requests that failed in a row.
  std::string last_probe;
  TimeMs probed_at_ms = 0;
  bool probing = false;
};

// A service's traffic as the autoscaler weighs it: averages over the last stable and panic
// windows of one-second samples.
struct TrafficStats {
  double rps_stable = 0;
  double rps_panic = 0;
  double concurrency_stable = 0;
  double concurrency_panic = 0;
  int in_flight = 0;
  int held = 0;  // Requests waiting for a replica to be ready.
  TimeMs last_request_ms = 0;
};

inline constexpr int kStableWindowS = 60;
// How often a replica that is not ready is probed while requests wait for it, and how often the
// controller decides meanwhile.
inline constexpr int64_t kEagerProbeMs = 100;
inline constexpr int64_t kEagerRoundMs = 50;
inline constexpr int kPanicWindowS = 6;
// A replica that was ready and then failed this many probes or requests in a row is restarted.
inline constexpr int kLivenessFailures = 3;

class ServiceTraffic {
 public:
  // The controller's account of a live service and its replicas; the health of replicas no
  // longer listed goes.
  // `waiting`: why no replica is ready, if that is known (a replica's queue reason).
  void publish(const ServiceRoute& route, std::vector<Endpoint> endpoints, std::string waiting);
  std::string waiting(const std::string& service_id) const;
  // Whether any service holds a request.
  bool any_held() const;
  // Called (on the proxy's thread) whenever a request starts to wait for a replica.
  void on_hold(std::function<void()> wake);
  void remove_service(const std::string& service_id);
  // Services published and not removed, by id.
  std::vector<std::string> service_ids() const;

  // The tenant's service whose id or name is `key` (any tenant's of that id, for an empty
  // tenant: the operator's); the tenant's whose model is `model`.
  std::optional<ServiceRoute> find(const std::string& tenant_id, const std::string& key) const;
  std::optional<ServiceRoute> find_model(const std::string& tenant_id,
                                         const std::string& model) const;
  // The tenant's services that declare a model.
  std::vector<ServiceRoute> with_models(const std::string& tenant_id) const;

  // The proxy: a request arrives (counted once), is held while no replica is ready, and is
  // given the ready replica with the fewest requests in flight, other than `avoid`.
  void arrive(const std::string& service_id, TimeMs now_ms);
  void hold(const std::string& service_id, int delta);
  std::optional<Endpoint> acquire(const std::string& service_id,
                                  const std::vector<std::string>& avoid);
  // The request to `instance_id` ended; `failed`: it could not be reached.
  void release(const std::string& service_id, const std::string& instance_id, bool failed);

  // The prober: the running replicas to probe now (each marked probing), and what a probe found.
  std::vector<std::pair<std::string, Endpoint>> due_probes(TimeMs now_ms, int64_t every_ms);
  void record_probe(const std::string& instance_id, bool ready, std::string detail, TimeMs now_ms);

  // Takes this second's sample of the service's concurrency and returns its traffic; called
  // once a second by the controller.
  TrafficStats sample(const std::string& service_id, TimeMs now_ms);
  TrafficStats stats(const std::string& service_id) const;
  std::optional<ReplicaHealth> health(const std::string& instance_id) const;
  std::vector<Endpoint> endpoints(const std::string& service_id) const;

  // Callers' use of shared services, and their money.
  ServiceMeter& meter() { return meter_; }

 private:
  struct Second {
    int64_t at_s = 0;
    int64_t requests = 0;
    double concurrency = 0;
  };
  struct Traffic {
    ServiceRoute route;
    std::vector<Endpoint> endpoints;
    std::string waiting;
    std::deque<Second> seconds;  // The newest last, at most kStableWindowS.
    int in_flight = 0;
    int held = 0;
    TimeMs last_request_ms = 0;
  };
  Second& second_of(Traffic& traffic, TimeMs now_ms);
  TrafficStats stats_of(const Traffic& traffic) const;

  mutable std::mutex mutex_;
  std::map<std::string, Traffic> services_;
  std::map<std::string, ReplicaHealth> replicas_;
  std::function<void()> wake_;  // Guarded by mutex_; called outside it.
  ServiceMeter meter_;
};

}  // namespace allot
