#include "daemon/service_controller.h"

#include <algorithm>
#include <cmath>
#include <future>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/cluster/services.h"
#include "core/money/service_use.h"

namespace allot {
namespace {

// The longest pause between two replacements of replicas that keep ending.
constexpr int64_t kMaxBackoffMs = 60'000;

int replicas_for(double load, int target) {
  if (target <= 0) return 0;
  return static_cast<int>(std::ceil(load / target - 1e-9));
}

bool ready(const ServiceTraffic& traffic, const Instance& replica) {
  if (replica.state != InstanceState::kRunning) return false;
  auto health = traffic.health(replica.id);
  return health && health->ready;
}

// Drained first: replicas that are not ready, then the newest.
void order_for_removal(std::vector<const Instance*>& replicas, const ServiceTraffic& traffic) {
  std::ranges::sort(replicas, [&traffic](const Instance* a, const Instance* b) {
    const bool ra = ready(traffic, *a);
    const bool rb = ready(traffic, *b);
    if (ra != rb) return !ra;
    return a->created_at_ms > b->created_at_ms;
  });
}

}  // namespace

std::pair<int, std::string> wanted_replicas(const HostedService& s, const TrafficStats& traffic,
                                            TimeMs now_ms, ServiceMemory& memory,
                                            const ServiceControllerOptions& options) {
  const int floor = std::max(s.min_replicas, 1);
  const TimeMs last_activity =
      std::max({traffic.last_request_ms, s.created_at_ms, s.updated_at_ms});
  const bool busy = traffic.held > 0 || traffic.in_flight > 0;
  const bool may_sleep = s.scale_to_zero_after_ms > 0 || s.min_replicas == 0;
  if (s.desired == 0) {
    if (traffic.held > 0) return {floor, "a request is waiting for a replica"};
    return {0, s.scale_reason};
  }
  if (may_sleep && !busy && s.scale_to_zero_after_ms > 0 &&
      now_ms - last_activity >= s.scale_to_zero_after_ms) {
    return {0, fmt::format("no request for {} s", s.scale_to_zero_after_ms / 1000)};
  }
  int want = floor;
  std::string why = fmt::format("the minimum of {}", floor);
  double stable = 0;
  double panic = 0;
  int target = 0;
  std::string_view unit;
  if (s.target_rps > 0) {
    stable = traffic.rps_stable;
    panic = traffic.rps_panic;
    target = s.target_rps;
    unit = "requests per second";
  } else if (s.target_concurrency > 0) {
    stable = traffic.concurrency_stable;
    panic = traffic.concurrency_panic;
    target = s.target_concurrency;
    unit = "requests in flight";
  }
  if (target > 0) {
    const int by_stable = std::clamp(replicas_for(stable, target), floor, s.max_replicas);
    const int by_panic = std::clamp(replicas_for(panic, target), floor, s.max_replicas);
    want = by_stable;
    why = fmt::format("{:.1f} {} over {} s, {} per replica", stable, unit, kStableWindowS, target);
    // Panic: the last seconds want twice what there is: grow at once, never shrink meanwhile.
    if (by_panic >= 2 * s.desired && by_panic > want) {
      want = by_panic;
      why = fmt::format("panic: {:.1f} {} over the last {} s, {} per replica", panic, unit,
                        kPanicWindowS, target);
    }
  }
  if (want >= s.desired) {
    memory.fewer_since_ms = 0;
    return {want, want == s.desired ? s.scale_reason : why};
  }
  // Fewer replicas must do for a while before they go.
  if (memory.fewer_since_ms == 0) memory.fewer_since_ms = now_ms;
  if (now_ms - memory.fewer_since_ms < options.scale_down_delay_ms)
    return {s.desired, s.scale_reason};
  memory.fewer_since_ms = 0;
  return {want, why};
}

ServiceController::ServiceController(Service& service, ServiceTraffic& traffic,
                                     ServiceControllerOptions options)
    : service_(service), traffic_(traffic), options_(options) {
  traffic_.on_hold([this] {
    {
      const std::lock_guard lock(mutex_);
      woken_ = true;
    }
    wake_.notify_all();
  });
  thread_ = std::thread([this] { loop(); });
}

ServiceController::~ServiceController() { stop(); }

void ServiceController::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  traffic_.on_hold(nullptr);
}

void ServiceController::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Rounds come fast while requests wait: each may be the one that finds their replica running.
    const int64_t wait_ms =
        traffic_.any_held() ? std::min(options_.interval_ms, kEagerRoundMs) : options_.interval_ms;
    wake_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                   [this] { return stopping_ || woken_; });
    if (stopping_) break;
    woken_ = false;
    lock.unlock();
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> finished = done->get_future();
    service_.submit(
        [this](Context& ctx) {
          round(ctx);
          return HttpResponse{.status = 200};
        },
        [done](const HttpResponse&) { done->set_value(); });
    finished.wait();
    lock.lock();
  }
}

void ServiceController::round(Context& ctx) {
  std::set<std::string> seen;
  for (const auto& [id, service] : ctx.state().services) {
    const bool has_replicas = ctx.state().replicas_by_service.contains(id);
    if (service.deleted()) {
      if (has_replicas || memory_.contains(id)) retire(ctx, service);
      continue;
    }
    seen.insert(id);
    reconcile(ctx, service, memory_[id]);
  }
  // Services another leader deleted while this one was not looking.
  for (const std::string& id : traffic_.service_ids()) {
    if (!seen.contains(id)) traffic_.remove_service(id);
  }
  meter(ctx);
}

void ServiceController::meter(Context& ctx) {
  std::vector<ServiceUseCount> counts = traffic_.meter().take();
  if (!counts.empty()) {
    if (auto ok = ctx.apply(RecordServiceUse{.counts = counts}); !ok) {
      if (ok.error().code == ErrorCode::kUnavailable) {
        traffic_.meter().give_back(counts);
      } else {
        // One bad count (a caller tenant since deleted) must not lose the others'.
        for (const ServiceUseCount& count : counts) {
          if (auto one = ctx.apply(RecordServiceUse{.counts = {count}}); !one) {
            spdlog::warn("msg=\"service use not recorded\" service={} caller={} error=\"{}\"",
                         count.service_id, count.caller_tenant_id, one.error().message);
          }
        }
      }
    }
  }
  const State& state = ctx.state();
  const Draft draft(state);
  std::map<std::string, int64_t> spendable;
  for (const std::string& id : state.billed_keys) {
    const ServiceKey& key = state.service_keys.at(id);
    if (spendable.contains(key.caller_tenant_id)) continue;
    if (const Tenant* caller = state.tenant(key.caller_tenant_id)) {
      spendable[caller->id] = spendable_on_services(draft, *caller, ctx.now_ms());
    }
  }
  traffic_.meter().set_spendable(spendable);
}

void ServiceController::retire(Context& ctx, const HostedService& service) {
  for (const Instance* replica : live_replicas(ctx.state(), service.id)) {
    if (replica->stop_requested) continue;
    const std::string id = replica->id;
    if (auto ok = ctx.apply(StopInstance{.id = id}); !ok) {
      spdlog::warn("msg=\"cannot stop a deleted service's replica\" instance={} error=\"{}\"", id,
                   ok.error().message);
    }
  }
  traffic_.remove_service(service.id);
  memory_.erase(service.id);
}

// Replicas that ended on their own since the last round: counted, and replaced after a pause
// that doubles with each one in a row.
void ServiceController::count_ended(Context& ctx, const HostedService& service,
                                    ServiceMemory& memory) {
  std::set<std::string> live_ids;
  for (const Instance* r : live_replicas(ctx.state(), service.id)) live_ids.insert(r->id);
  int64_t ended = 0;
  for (const std::string& known : memory.known) {
    if (live_ids.contains(known)) continue;
    memory.draining.erase(known);
    const Instance* gone = ctx.state().instance(known);
    if (gone == nullptr || gone->stop_requested) continue;
    ++ended;
    if (gone->state == InstanceState::kPreempted) memory.spot_failed = service.spot_fallback;
  }
  memory.known = std::move(live_ids);
  if (ended == 0) return;
  memory.crashes += static_cast<int>(ended);
  memory.next_start_ms =
      ctx.now_ms() + std::min<int64_t>(kMaxBackoffMs, int64_t{500} << std::min(memory.crashes, 8));
  (void)ctx.apply(RecordServiceRollout{.id = service.id,
                                       .revision = service.revision,
                                       .rollout = service.rollout,
                                       .reason = service.rollout_reason,
                                       .restarts = ended});
}

void ServiceController::scale(Context& ctx, const HostedService& service, ServiceMemory& memory) {
  const TimeMs now_ms = ctx.now_ms();
  auto [want, why] =
      wanted_replicas(service, traffic_.sample(service.id, now_ms), now_ms, memory, options_);
  if (want == service.desired) return;
  if (auto ok = ctx.apply(ScaleService{.id = service.id, .desired = want, .reason = why}); !ok) {
    spdlog::warn("msg=\"service scale refused\" service={} error=\"{}\"", service.name,
                 ok.error().message);
  }
}

// A new revision whose replica is not ready in time stops its rollout; the serving one serves on
// and the new revision's replicas stop.
void ServiceController::check_deadline(Context& ctx, const HostedService& s, Replicas& replicas,
                                       std::vector<std::string>& to_stop) {
  if (s.rollout == kRolloutFailed || s.revision == s.serving_revision) return;
  for (const Instance* r : replicas.fresh) {
    if (ready(traffic_, *r) || ctx.now_ms() - r->created_at_ms < s.ready_timeout_ms) continue;
    const auto health = traffic_.health(r->id);
    const std::string seen =
        health && !health->last_probe.empty()
            ? health->last_probe
            : fmt::format("it is {}: {}", instance_state_name(r->state), r->reason);
    const std::string reason = fmt::format(
        "replica {} of revision {} was not ready within {} s ({}); {}", r->id, s.revision,
        s.ready_timeout_ms / 1000, seen,
        s.serving_revision > 0 ? fmt::format("revision {} serves on", s.serving_revision)
                               : std::string("nothing serves"));
    (void)ctx.apply(RecordServiceRollout{.id = s.id,
                                         .revision = s.revision,
                                         .rollout = std::string(kRolloutFailed),
                                         .reason = reason});
    spdlog::warn("msg=\"service rollout failed\" service={} reason=\"{}\"", s.name, reason);
    for (const Instance* f : replicas.fresh) to_stop.push_back(f->id);
    replicas.fresh.clear();
    replicas.ready_fresh = 0;
    return;
  }
}

// Liveness: a running replica that was ready and has since failed kLivenessFailures probes or
// requests in a row, or one of the serving revision that was never ready within the ready
// timeout, is restarted: stopped, counted, and replaced after the backoff of replicas that end.
void ServiceController::check_liveness(Context& ctx, const HostedService& s, Replicas& replicas,
                                       std::vector<std::string>& to_stop, ServiceMemory& memory) {
  auto dead = [&](const Instance* r) {
    if (r->state != InstanceState::kRunning) return false;
    const auto health = traffic_.health(r->id);
    if (!health || health->ready) return false;
    if (health->ready_since_ms != 0) return health->failures >= kLivenessFailures;
    // A new revision's replica that never gets ready stops its rollout instead (check_deadline).
    return r->spec.service_revision == s.serving_revision &&
           ctx.now_ms() - r->started_at_ms >= s.ready_timeout_ms;
  };
  int64_t restarted = 0;
  std::string last;
  for (std::vector<const Instance*>* list : {&replicas.fresh, &replicas.old}) {
    std::erase_if(*list, [&](const Instance* r) {
      if (!dead(r)) return false;
      const auto health = traffic_.health(r->id);
      last = fmt::format("replica {} was restarted: {}", r->id,
                         health ? health->last_probe : std::string("no probe answered"));
      spdlog::warn("msg=\"service replica failed its liveness\" service={} instance={} last=\"{}\"",
                   s.name, r->id, health ? health->last_probe : std::string());
      to_stop.push_back(r->id);
      ++restarted;
      return true;
    });
  }
  if (restarted == 0) return;
  memory.crashes += static_cast<int>(restarted);
  memory.next_start_ms =
      ctx.now_ms() + std::min<int64_t>(kMaxBackoffMs, int64_t{500} << std::min(memory.crashes, 8));
  (void)ctx.apply(
      RecordServiceRollout{.id = s.id,
                           .revision = s.revision,
                           .rollout = s.rollout,
                           .reason = s.rollout == kRolloutDone ? last : s.rollout_reason,
                           .restarts = restarted});
}

// Which replicas go: old ones as new ones are ready (the ready ones the new cannot yet replace
// stay; where a new replica finds no room, one old replica may go first to make it, as long as
// another serves), and new ones past what is wanted, the least useful first.
std::vector<std::string> ServiceController::to_drain(Replicas& replicas, int desired) const {
  std::vector<std::string> out;
  const bool no_room = std::ranges::any_of(
      replicas.fresh, [](const Instance* r) { return r->state == InstanceState::kQueued; });
  const int unavailable = no_room && desired >= 2 ? 1 : 0;
  const int keep_old = std::max(0, desired - replicas.ready_fresh - unavailable);
  order_for_removal(replicas.old, traffic_);
  for (size_t i = 0; i < replicas.old.size(); ++i) {
    if (static_cast<int>(replicas.old.size() - i) <= keep_old) break;
    out.push_back(replicas.old[i]->id);
  }
  replicas.old_kept = std::min(static_cast<int>(replicas.old.size()), keep_old);
  if (static_cast<int>(replicas.fresh.size()) > desired) {
    order_for_removal(replicas.fresh, traffic_);
    for (size_t i = 0; i + desired < replicas.fresh.size(); ++i) {
      out.push_back(replicas.fresh[i]->id);
    }
  }
  return out;
}

void ServiceController::start(Context& ctx, const HostedService& s, const ServiceRevision& revision,
                              int count, ServiceMemory& memory) {
  for (int i = 0; i < count; ++i) {
    InstanceSpec spec = revision.spec;
    spec.service_id = s.id;
    spec.service_revision = revision.number;
    if (memory.spot_failed && spec.price_class == PriceClass::kSpot) {
      spec.price_class = PriceClass::kOnDemand;
    }
    const std::string replica_id = ctx.ids().new_id("ins");
    auto ok = ctx.apply(CreateInstance{.id = replica_id,
                                       .tenant_id = s.tenant_id,
                                       .project_id = s.project_id,
                                       .user_id = s.user_id,
                                       .spec = std::move(spec)});
    if (!ok) {
      const std::string reason = fmt::format("cannot start a replica of revision {}: {}",
                                             revision.number, ok.error().message);
      if (reason != s.rollout_reason) {
        (void)ctx.apply(RecordServiceRollout{
            .id = s.id, .revision = s.revision, .rollout = s.rollout, .reason = reason});
      }
      memory.next_start_ms = ctx.now_ms() + options_.interval_ms * 5;
      return;
    }
    memory.known.insert(replica_id);
  }
}

// Draining replicas take no new requests; each stops once the proxy has been told (the last round
// published it) and its requests are answered, or when its drain is up.
void ServiceController::stop_drained(Context& ctx, const std::vector<std::string>& drain,
                                     std::vector<std::string> to_stop, ServiceMemory& memory) {
  const TimeMs now_ms = ctx.now_ms();
  for (const std::string& drained : drain) memory.draining.try_emplace(drained, now_ms);
  for (auto it = memory.draining.begin(); it != memory.draining.end();) {
    const Instance* replica = ctx.state().instance(it->first);
    if (std::ranges::find(drain, it->first) == drain.end() || replica == nullptr ||
        is_final(replica->state)) {
      it = memory.draining.erase(it);
      continue;
    }
    const auto health = traffic_.health(it->first);
    const bool idle = !health || health->outstanding == 0;
    const bool told = it->second < now_ms;
    if ((told && idle) || now_ms - it->second >= options_.drain_ms) to_stop.push_back(it->first);
    ++it;
  }
  for (const std::string& stopped : to_stop) {
    if (auto ok = ctx.apply(StopInstance{.id = stopped}); !ok) {
      spdlog::warn("msg=\"cannot stop a replica\" instance={} error=\"{}\"", stopped,
                   ok.error().message);
    }
    memory.draining.erase(stopped);
  }
}

// What the proxy may use, and why nothing is ready when nothing is.
void ServiceController::publish(Context& ctx, const HostedService& s, const ServiceMemory& memory) {
  std::vector<Endpoint> endpoints;
  std::string waiting;
  for (const Instance* r : live_replicas(ctx.state(), s.id)) {
    const ServiceRevision* of = s.revision_of(r->spec.service_revision);
    const bool running = r->state == InstanceState::kRunning && !r->node_id.empty();
    endpoints.push_back(Endpoint{.instance_id = r->id,
                                 .node_id = running ? r->node_id : std::string(),
                                 .port = of != nullptr ? of->port : 0,
                                 .revision = r->spec.service_revision,
                                 .readiness = of != nullptr ? of->readiness : "/",
                                 .draining = r->stop_requested || memory.draining.contains(r->id)});
    if (waiting.empty() && !running) {
      waiting =
          fmt::format("replica {} is {}: {}", r->id, instance_state_name(r->state), r->reason);
    }
  }
  if (endpoints.empty()) {
    waiting = s.desired == 0 ? "the service is at zero replicas"
                             : "no replica is running: " + s.rollout_reason;
  }
  traffic_.publish(ServiceRoute::of(s), std::move(endpoints), std::move(waiting));
}

void ServiceController::reconcile(Context& ctx, const HostedService& service,
                                  ServiceMemory& memory) {
  const std::string id = service.id;
  count_ended(ctx, service, memory);
  scale(ctx, service, memory);
  const HostedService& s = *ctx.state().service(id);
  const bool failed = s.rollout == kRolloutFailed;
  const int target = failed ? s.serving_revision : s.revision;
  Replicas replicas;
  for (const Instance* r : live_replicas(ctx.state(), id)) {
    if (r->stop_requested) continue;
    (r->spec.service_revision == target ? replicas.fresh : replicas.old).push_back(r);
  }
  replicas.ready_fresh = static_cast<int>(std::ranges::count_if(
      replicas.fresh, [this](const Instance* r) { return ready(traffic_, *r); }));
  // A revision changed again before its rollout finished: the one its ready replicas run is
  // what serves meanwhile.
  if (s.serving_revision == 0) {
    for (const Instance* r : replicas.old) {
      if (!ready(traffic_, *r)) continue;
      (void)ctx.apply(RecordServiceRollout{.id = id,
                                           .revision = r->spec.service_revision,
                                           .rollout = std::string(kRolloutDone),
                                           .reason = "serving while a newer revision rolls out"});
      break;
    }
  }
  std::vector<std::string> to_stop;
  check_deadline(ctx, s, replicas, to_stop);
  check_liveness(ctx, s, replicas, to_stop, memory);
  // Spot replicas that wait too long for spot capacity go on-demand, where the service allows.
  if (s.spot_fallback) {
    for (const Instance* r : replicas.fresh) {
      if (r->spec.price_class == PriceClass::kSpot && r->state == InstanceState::kQueued &&
          ctx.now_ms() - r->created_at_ms >= options_.spot_wait_ms) {
        memory.spot_failed = true;
        to_stop.push_back(r->id);
      }
    }
    std::erase_if(replicas.fresh, [&to_stop](const Instance* r) {
      return std::ranges::find(to_stop, r->id) != to_stop.end();
    });
  }
  const int desired = s.desired;
  const std::vector<std::string> drain = to_drain(replicas, desired);
  // New replicas up to what is wanted, one beyond it while old ones still serve (a surge of one).
  const int fresh = static_cast<int>(replicas.fresh.size());
  const int cap = desired + (replicas.old_kept > 0 ? 1 : 0);
  const int count = std::min(desired - fresh, cap - fresh - replicas.old_kept);
  const ServiceRevision* revision = s.revision_of(target);
  if (count > 0 && revision != nullptr && ctx.now_ms() >= memory.next_start_ms) {
    start(ctx, s, *revision, count, memory);
  }
  stop_drained(ctx, drain, std::move(to_stop), memory);
  // A rollout is done when the new revision's ready replicas are all that serve.
  const HostedService& after = *ctx.state().service(id);
  if (after.rollout == kRolloutRolling && replicas.old.empty() && replicas.ready_fresh >= desired) {
    (void)ctx.apply(
        RecordServiceRollout{.id = id,
                             .revision = after.revision,
                             .rollout = std::string(kRolloutDone),
                             .reason = fmt::format("revision {} serves on {} replicas",
                                                   after.revision, replicas.ready_fresh)});
    memory.crashes = 0;
  }
  publish(ctx, after, memory);
}

}  // namespace allot
