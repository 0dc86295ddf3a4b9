#include "api/service_traffic.h"

#include <algorithm>
#include <set>

namespace allot {

void ServiceTraffic::publish(const ServiceRoute& route, std::vector<Endpoint> endpoints,
                             std::string waiting) {
  const std::lock_guard lock(mutex_);
  Traffic& traffic = services_[route.id];
  traffic.route = route;
  traffic.waiting = std::move(waiting);
  std::set<std::string> listed;
  for (const Endpoint& e : endpoints) listed.insert(e.instance_id);
  for (const Endpoint& e : traffic.endpoints) {
    if (!listed.contains(e.instance_id)) replicas_.erase(e.instance_id);
  }
  for (const Endpoint& e : endpoints) {
    // A replica that stopped running is not ready, whatever its last probe said.
    if (e.node_id.empty()) {
      if (auto it = replicas_.find(e.instance_id); it != replicas_.end()) it->second.ready = false;
    }
  }
  traffic.endpoints = std::move(endpoints);
}

void ServiceTraffic::remove_service(const std::string& service_id) {
  const std::lock_guard lock(mutex_);
  auto it = services_.find(service_id);
  if (it == services_.end()) return;
  for (const Endpoint& e : it->second.endpoints) replicas_.erase(e.instance_id);
  services_.erase(it);
}

std::vector<std::string> ServiceTraffic::service_ids() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [id, traffic] : services_) {
    if (!traffic.route.id.empty()) out.push_back(id);
  }
  return out;
}

std::optional<ServiceRoute> ServiceTraffic::find(const std::string& tenant_id,
                                                 const std::string& key) const {
  const std::lock_guard lock(mutex_);
  if (auto it = services_.find(key); it != services_.end()) {
    const ServiceRoute& route = it->second.route;
    if (!route.id.empty() && (tenant_id.empty() || route.tenant_id == tenant_id)) return route;
    return std::nullopt;
  }
  if (tenant_id.empty()) return std::nullopt;
  for (const auto& [id, traffic] : services_) {
    if (traffic.route.tenant_id == tenant_id && traffic.route.name == key) return traffic.route;
  }
  return std::nullopt;
}

std::optional<ServiceRoute> ServiceTraffic::find_model(const std::string& tenant_id,
                                                       const std::string& model) const {
  const std::lock_guard lock(mutex_);
  for (const auto& [id, traffic] : services_) {
    if (traffic.route.tenant_id == tenant_id && !model.empty() && traffic.route.model == model) {
      return traffic.route;
    }
  }
  return std::nullopt;
}

std::vector<ServiceRoute> ServiceTraffic::with_models(const std::string& tenant_id) const {
  const std::lock_guard lock(mutex_);
  std::vector<ServiceRoute> out;
  for (const auto& [id, traffic] : services_) {
    if (traffic.route.tenant_id == tenant_id && !traffic.route.model.empty()) {
      out.push_back(traffic.route);
    }
  }
  return out;
}

ServiceTraffic::Second& ServiceTraffic::second_of(Traffic& traffic, TimeMs now_ms) {
  const int64_t at_s = now_ms / 1000;
  if (traffic.seconds.empty() || traffic.seconds.back().at_s < at_s) {
    traffic.seconds.push_back(Second{.at_s = at_s});
  }
  while (traffic.seconds.front().at_s <= at_s - kStableWindowS) traffic.seconds.pop_front();
  return traffic.seconds.back();
}

void ServiceTraffic::arrive(const std::string& service_id, TimeMs now_ms) {
  const std::lock_guard lock(mutex_);
  Traffic& traffic = services_[service_id];
  ++second_of(traffic, now_ms).requests;
  traffic.last_request_ms = now_ms;
}

bool ServiceTraffic::any_held() const {
  const std::lock_guard lock(mutex_);
  return std::ranges::any_of(services_, [](const auto& entry) { return entry.second.held > 0; });
}

std::string ServiceTraffic::waiting(const std::string& service_id) const {
  const std::lock_guard lock(mutex_);
  auto it = services_.find(service_id);
  return it == services_.end() ? std::string() : it->second.waiting;
}

void ServiceTraffic::on_hold(std::function<void()> wake) {
  const std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

void ServiceTraffic::hold(const std::string& service_id, int delta) {
  std::function<void()> wake;
  {
    const std::lock_guard lock(mutex_);
    services_[service_id].held += delta;
    if (delta > 0) wake = wake_;
  }
  if (wake) wake();
}

std::optional<Endpoint> ServiceTraffic::acquire(const std::string& service_id,
                                                const std::vector<std::string>& avoid) {
  const std::lock_guard lock(mutex_);
  auto it = services_.find(service_id);
  if (it == services_.end()) return std::nullopt;
  const Endpoint* best = nullptr;
  ReplicaHealth* best_health = nullptr;
  for (const Endpoint& e : it->second.endpoints) {
    if (e.draining || e.node_id.empty() || std::ranges::find(avoid, e.instance_id) != avoid.end()) {
      continue;
    }
    auto health = replicas_.find(e.instance_id);
    if (health == replicas_.end() || !health->second.ready) continue;
    // The fewest in flight; among equals the one that has served least, so that requests one
    // after another go round.
    const ReplicaHealth& h = health->second;
    if (best == nullptr || h.outstanding < best_health->outstanding ||
        (h.outstanding == best_health->outstanding && h.served < best_health->served)) {
      best = &e;
      best_health = &health->second;
    }
  }
  if (best == nullptr) return std::nullopt;
  ++best_health->outstanding;
  ++it->second.in_flight;
  return *best;
}

void ServiceTraffic::release(const std::string& service_id, const std::string& instance_id,
                             bool failed) {
  const std::lock_guard lock(mutex_);
  if (auto it = services_.find(service_id); it != services_.end()) --it->second.in_flight;
  auto health = replicas_.find(instance_id);
  if (health == replicas_.end()) return;
  --health->second.outstanding;
  if (failed) {
    // Out of rotation until a probe finds it ready again.
    ++health->second.failures;
    health->second.ready = false;
    health->second.last_probe = "a request could not reach it";
  } else {
    ++health->second.served;
  }
}

std::vector<std::pair<std::string, Endpoint>> ServiceTraffic::due_probes(TimeMs now_ms,
                                                                         int64_t every_ms) {
  const std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, Endpoint>> out;
  for (const auto& [service_id, traffic] : services_) {
    for (const Endpoint& e : traffic.endpoints) {
      if (e.node_id.empty()) continue;
      ReplicaHealth& health = replicas_[e.instance_id];
      // While requests wait for it, a replica that is not ready yet is asked often: its first
      // ready answer ends their wait.
      const int64_t due =
          traffic.held > 0 && !health.ready ? std::min(every_ms, kEagerProbeMs) : every_ms;
      if (health.probing || now_ms - health.probed_at_ms < due) continue;
      health.probing = true;
      out.emplace_back(service_id, e);
    }
  }
  return out;
}

void ServiceTraffic::record_probe(const std::string& instance_id, bool ready, std::string detail,
                                  TimeMs now_ms) {
  const std::lock_guard lock(mutex_);
  auto it = replicas_.find(instance_id);
  if (it == replicas_.end()) return;  // Gone while it was probed.
  ReplicaHealth& health = it->second;
  health.probing = false;
  health.probed_at_ms = now_ms;
  health.last_probe = std::move(detail);
  if (ready && !health.ready) health.ready_since_ms = now_ms;
  health.ready = ready;
  health.failures = ready ? 0 : health.failures + 1;
}

TrafficStats ServiceTraffic::stats_of(const Traffic& traffic) const {
  TrafficStats out{.in_flight = traffic.in_flight,
                   .held = traffic.held,
                   .last_request_ms = traffic.last_request_ms};
  if (traffic.seconds.empty()) return out;
  // Whole seconds only: the newest one is still filling.
  const int64_t newest = traffic.seconds.back().at_s;
  double requests_stable = 0;
  double requests_panic = 0;
  double busy_stable = 0;
  double busy_panic = 0;
  for (const Second& s : traffic.seconds) {
    if (s.at_s > newest - kStableWindowS) {
      requests_stable += static_cast<double>(s.requests);
      busy_stable += s.concurrency;
    }
    if (s.at_s > newest - kPanicWindowS) {
      requests_panic += static_cast<double>(s.requests);
      busy_panic += s.concurrency;
    }
  }
  // A service measured for less than a window is averaged over what there is.
  const auto span = static_cast<double>(newest - traffic.seconds.front().at_s + 1);
  const double stable_s = std::min<double>(kStableWindowS, span);
  const double panic_s = std::min<double>(kPanicWindowS, span);
  out.rps_stable = requests_stable / stable_s;
  out.rps_panic = requests_panic / panic_s;
  out.concurrency_stable = busy_stable / stable_s;
  out.concurrency_panic = busy_panic / panic_s;
  return out;
}

TrafficStats ServiceTraffic::sample(const std::string& service_id, TimeMs now_ms) {
  const std::lock_guard lock(mutex_);
  Traffic& traffic = services_[service_id];
  Second& second = second_of(traffic, now_ms);
  // Held requests count as load: they are what a replica would be carrying.
  second.concurrency = std::max(second.concurrency,
                                static_cast<double>(traffic.in_flight + std::max(traffic.held, 0)));
  return stats_of(traffic);
}

TrafficStats ServiceTraffic::stats(const std::string& service_id) const {
  const std::lock_guard lock(mutex_);
  auto it = services_.find(service_id);
  return it == services_.end() ? TrafficStats{} : stats_of(it->second);
}

std::optional<ReplicaHealth> ServiceTraffic::health(const std::string& instance_id) const {
  const std::lock_guard lock(mutex_);
  auto it = replicas_.find(instance_id);
  if (it == replicas_.end()) return std::nullopt;
  return it->second;
}

std::vector<Endpoint> ServiceTraffic::endpoints(const std::string& service_id) const {
  const std::lock_guard lock(mutex_);
  auto it = services_.find(service_id);
  return it == services_.end() ? std::vector<Endpoint>{} : it->second.endpoints;
}

}  // namespace allot
