#include "core/cluster/services.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/cluster/cluster.h"
#include "core/cluster/service_prices.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

// Printable ASCII without spaces: what a header, a URL path or a JSON string carries as it is.
bool printable(std::string_view text) {
  return std::ranges::all_of(text, [](unsigned char c) { return c > 0x20 && c < 0x7f; });
}

Status check_model(const std::string& model) {
  if (model.empty()) return {};
  if (model.size() > limits::kMaxServiceModel || !printable(model)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a model name is 1 to {} printable characters without spaces",
                            limits::kMaxServiceModel));
  }
  return {};
}

Status check_revision(const ServiceRevision& r) {
  if (r.port < 1 || r.port > 65535) {
    return fail(ErrorCode::kInvalidArgument, "port must be from 1 to 65535");
  }
  if (r.readiness.empty() || r.readiness.front() != '/' ||
      r.readiness.size() > limits::kMaxReadinessPath || !printable(r.readiness)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("readiness must be a path from '/', of up to {} printable characters "
                            "without spaces",
                            limits::kMaxReadinessPath));
  }
  if (r.spec.nodes != 1) {
    return fail(ErrorCode::kInvalidArgument, "a service's replica runs on one node (no gangs)");
  }
  if (!r.spec.interactive) {
    return fail(ErrorCode::kInvalidArgument, "a service's replica runs until it is stopped");
  }
  if (!r.spec.service_id.empty() || r.spec.service_revision != 0) {
    return fail(ErrorCode::kInvalidArgument, "a revision's spec names no service");
  }
  return check_instance_spec(r.spec);
}

// min..max, the targets and the timers; `desired` aside.
Status check_settings(const HostedService& s) {
  if (s.max_replicas < 1 || s.max_replicas > limits::kMaxServiceReplicas || s.min_replicas < 0 ||
      s.min_replicas > s.max_replicas) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("replicas must be MIN:MAX with 0 <= MIN <= MAX, 1 <= MAX <= {}",
                            limits::kMaxServiceReplicas));
  }
  auto target_ok = [](int target) { return target >= 0 && target <= limits::kMaxServiceTarget; };
  if (!target_ok(s.target_rps) || !target_ok(s.target_concurrency)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("targets are from 0 to {}", limits::kMaxServiceTarget));
  }
  if (s.target_rps > 0 && s.target_concurrency > 0) {
    return fail(ErrorCode::kInvalidArgument,
                "a service scales on requests per second or on concurrency, not both");
  }
  if (s.scale_to_zero_after_ms != 0 && (s.scale_to_zero_after_ms < limits::kMinScaleToZeroMs ||
                                        s.scale_to_zero_after_ms > limits::kMaxScaleToZeroMs)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("scale to zero after must be from {} s to {} days, or 0 for never",
                            limits::kMinScaleToZeroMs / 1000,
                            limits::kMaxScaleToZeroMs / (int64_t{24} * 3'600'000)));
  }
  if (s.ready_timeout_ms < 1'000 || s.ready_timeout_ms > limits::kMaxReadyTimeoutMs) {
    return fail(ErrorCode::kInvalidArgument, "the ready timeout must be from 1 s to 24 h");
  }
  for (const int64_t price : {s.price_per_request_micros, s.price_per_1k_tokens_micros}) {
    if (price < 0 || price > limits::kMaxMoneyMicros) {
      return fail(ErrorCode::kInvalidArgument, "a service's prices are 0 or more");
    }
  }
  return check_model(s.model);
}

// The replicas `desired` may ask for: within min..max, or 0 where the service may be at zero.
bool desired_allowed(const HostedService& s, int desired) {
  if (desired == 0) return s.min_replicas == 0 || s.scale_to_zero_after_ms > 0;
  return desired >= s.min_replicas && desired <= s.max_replicas;
}

Status check_model_free(const State& state, const HostedService& s) {
  if (s.model.empty()) return {};
  const HostedService* other = service_for_model(state, s.tenant_id, s.model);
  if (other != nullptr && other->id != s.id) {
    return fail(ErrorCode::kAlreadyExists,
                fmt::format("service '{}' serves model '{}' already", other->name, s.model));
  }
  return {};
}

}  // namespace

Result<Rows> apply(const State& state, const CreateService& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const HostedService& s = c.service;
  if (auto ok = check_id("id", s.id, "svc"); !ok) return std::unexpected(ok.error());
  const Project* project = state.project(s.project_id);
  if (project == nullptr || project->deleted_at_ms != 0 || project->tenant_id != s.tenant_id) {
    return std::unexpected(not_found("project", s.project_id));
  }
  if (!is_plain_name(s.name, limits::kMaxServiceName)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a service's name is 1 to {} lowercase letters, digits, '-', '_' or "
                            "'.', starting with a letter or digit",
                            limits::kMaxServiceName));
  }
  if (auto ok = check_settings(s); !ok) return std::unexpected(ok.error());
  if (s.revisions.size() != 1) {
    return fail(ErrorCode::kInvalidArgument, "a new service has one revision");
  }
  if (auto ok = check_revision(s.revisions.front()); !ok) return std::unexpected(ok.error());
  if (state.service(s.id) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "service " + s.id + " exists");
  }
  if (service_named(state, s.tenant_id, s.name) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, fmt::format("a service named '{}' exists", s.name));
  }
  if (auto ok = check_model_free(state, s); !ok) return std::unexpected(ok.error());
  const auto first = state.service_by_name.lower_bound({s.tenant_id, ""});
  const auto past = state.service_by_name.lower_bound({s.tenant_id + '\x01', ""});
  if (static_cast<size_t>(std::distance(first, past)) >= limits::kMaxServicesPerTenant) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("a tenant runs at most {} services", limits::kMaxServicesPerTenant));
  }
  HostedService row = s;
  row.revisions.front().number = 1;
  row.revisions.front().created_at_ms = now_ms;
  row.revision = 1;
  row.serving_revision = 0;
  row.rollout = std::string(kRolloutRolling);
  row.rollout_reason = "revision 1 is starting";
  row.desired = row.min_replicas;
  row.scale_reason = "created";
  row.scaled_at_ms = now_ms;
  row.restarts = 0;
  row.created_at_ms = now_ms;
  row.updated_at_ms = now_ms;
  row.deleted_at_ms = 0;
  return Rows{std::move(row)};
}

Result<Rows> apply(const State& state, const UpdateService& c, TimeMs now_ms,
                   const Placing& placing) {
  auto live = found_live(state.service(c.id), "service", c.id);
  if (!live) return std::unexpected(live.error());
  const HostedService* found = *live;
  HostedService next = *found;
  if (c.min_replicas) next.min_replicas = *c.min_replicas;
  if (c.max_replicas) next.max_replicas = *c.max_replicas;
  if (c.target_rps) next.target_rps = *c.target_rps;
  if (c.target_concurrency) next.target_concurrency = *c.target_concurrency;
  // One target replaces the other: a service scales on one measure.
  if (c.target_rps && *c.target_rps > 0 && !c.target_concurrency) next.target_concurrency = 0;
  if (c.target_concurrency && *c.target_concurrency > 0 && !c.target_rps) next.target_rps = 0;
  if (c.scale_to_zero_after_ms) next.scale_to_zero_after_ms = *c.scale_to_zero_after_ms;
  if (c.ready_timeout_ms) next.ready_timeout_ms = *c.ready_timeout_ms;
  if (c.model) next.model = *c.model;
  if (c.shared) next.shared = *c.shared;
  for (const auto& price : {c.price_per_request_micros, c.price_per_1k_tokens_micros}) {
    if (price && (*price < 0 || *price > limits::kMaxMoneyMicros)) {
      return fail(ErrorCode::kInvalidArgument, "a service's prices are 0 or more");
    }
  }
  Draft draft(state);
  set_service_prices(draft, *found, next, c.price_per_request_micros, c.price_per_1k_tokens_micros,
                     now_ms, placing.options.service_price_notice_ms);
  if (auto ok = check_settings(next); !ok) return std::unexpected(ok.error());
  if (auto ok = check_model_free(state, next); !ok) return std::unexpected(ok.error());
  if (c.revision) {
    if (auto ok = check_revision(*c.revision); !ok) return std::unexpected(ok.error());
    const ServiceRevision* current = found->revision_of(found->revision);
    const bool same = current != nullptr && current->spec == c.revision->spec &&
                      current->port == c.revision->port &&
                      current->readiness == c.revision->readiness;
    if (!same) {
      ServiceRevision added = *c.revision;
      added.number = found->revisions.empty() ? 1 : found->revisions.back().number + 1;
      added.created_at_ms = now_ms;
      next.revisions.push_back(std::move(added));
      next.revision = next.revisions.back().number;
      next.rollout = std::string(kRolloutRolling);
      next.rollout_reason = fmt::format("revision {} is rolling out", next.revision);
      while (next.revisions.size() > limits::kServiceRevisionsKept) {
        auto old = std::ranges::find_if(next.revisions, [&next](const ServiceRevision& r) {
          return r.number != next.serving_revision && r.number != next.revision;
        });
        next.revisions.erase(old);
      }
    }
  }
  if (!desired_allowed(next, next.desired)) {
    next.desired = std::clamp(next.desired, std::max(next.min_replicas, 1), next.max_replicas);
    next.scale_reason = "kept within the new replica range";
    next.scaled_at_ms = now_ms;
  }
  next.updated_at_ms = found->updated_at_ms;
  if (next == *found) return Rows{};
  next.updated_at_ms = now_ms;
  Rows out = draft.rows();  // The callers' notices of a rise, if any.
  out.emplace_back(std::move(next));
  return out;
}

Result<Rows> apply(const State& state, const DeleteService& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return delete_row(state.service(c.id), "service", c.id, now_ms);
}

Result<Rows> apply(const State& state, const ScaleService& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto live = found_live(state.service(c.id), "service", c.id);
  if (!live) return std::unexpected(live.error());
  const HostedService* found = *live;
  if (!desired_allowed(*found, c.desired)) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("service {} may have {} to {} replicas{}", found->name, found->min_replicas,
                    found->max_replicas, found->scale_to_zero_after_ms > 0 ? ", or 0" : ""));
  }
  if (c.desired == found->desired) return Rows{};
  HostedService next = *found;
  next.desired = c.desired;
  next.scale_reason = c.reason;
  next.scaled_at_ms = now_ms;
  return Rows{std::move(next)};
}

Result<Rows> apply(const State& state, const RecordServiceRollout& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  auto live = found_live(state.service(c.id), "service", c.id);
  if (!live) return std::unexpected(live.error());
  const HostedService* found = *live;
  if (found->revision_of(c.revision) == nullptr) {
    return std::unexpected(not_found("revision", std::to_string(c.revision)));
  }
  if (c.rollout != kRolloutRolling && c.rollout != kRolloutDone && c.rollout != kRolloutFailed) {
    return fail(ErrorCode::kInvalidArgument, "a rollout is rolling, done or failed");
  }
  if (c.restarts < 0) return fail(ErrorCode::kInvalidArgument, "restarts only add up");
  HostedService next = *found;
  next.restarts += c.restarts;
  if (c.rollout == kRolloutDone)
    next.serving_revision = std::max(next.serving_revision, c.revision);
  if (c.revision == next.revision) {
    next.rollout = c.rollout;
    next.rollout_reason = c.reason;
  }
  if (next == *found) return Rows{};
  return Rows{std::move(next)};
}

Result<Rows> apply(const State& state, const CreateServiceKey& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const ServiceKey& k = c.key;
  if (auto ok = check_id("id", k.id, "svk"); !ok) return std::unexpected(ok.error());
  const HostedService* service = state.service(k.service_id);
  if (service == nullptr || service->deleted() || service->tenant_id != k.tenant_id) {
    return std::unexpected(not_found("service", k.service_id));
  }
  if (k.name.empty() || k.name.size() > 200) {
    return fail(ErrorCode::kInvalidArgument, "a key's name is 1 to 200 characters");
  }
  const std::string caller = k.caller_tenant_id.empty() ? k.tenant_id : k.caller_tenant_id;
  if (caller != k.tenant_id) {
    const Tenant* tenant = state.tenant(caller);
    if (tenant == nullptr) return std::unexpected(not_found("tenant", caller));
    // Not shared: to another tenant, it is not there.
    if (!service->shared) return std::unexpected(not_found("service", k.service_id));
  }
  if (k.token_hash.size() != 64) {
    return fail(ErrorCode::kInvalidArgument, "a key's hash is 64 hex characters");
  }
  if (state.service_keys.contains(k.id)) {
    return fail(ErrorCode::kAlreadyExists, "service key " + k.id + " exists");
  }
  if (state.service_key_by_hash.contains(k.token_hash)) {
    return fail(ErrorCode::kInvalidArgument, "that key hash is in use");
  }
  size_t live = 0;
  if (auto keys = state.keys_by_service.find(k.service_id); keys != state.keys_by_service.end()) {
    for (const std::string& id : keys->second) {
      if (state.service_keys.at(id).revoked_at_ms == 0) ++live;
    }
  }
  if (live >= limits::kMaxServiceKeys) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("a service has at most {} live keys", limits::kMaxServiceKeys));
  }
  ServiceKey row = k;
  row.caller_tenant_id = caller;
  row.created_at_ms = now_ms;
  row.revoked_at_ms = 0;
  return Rows{std::move(row)};
}

Result<Rows> apply(const State& state, const RevokeServiceKey& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto it = state.service_keys.find(c.id);
  return set_once(it == state.service_keys.end() ? nullptr : &it->second,
                  &ServiceKey::revoked_at_ms, "service key", c.id, now_ms);
}

void put(State& state, const ServiceKey& key) {
  state.service_keys[key.id] = key;
  state.service_key_by_hash[key.token_hash] = key.id;
  state.keys_by_service[key.service_id].insert(key.id);
  if (key.billed() && key.revoked_at_ms == 0) {
    state.billed_keys.insert(key.id);
  } else {
    state.billed_keys.erase(key.id);
  }
}

void put(State& state, const HostedService& service) {
  // A deleted service's name may be a live one's since: only its own entry is taken out.
  if (auto named = state.service_by_name.find({service.tenant_id, service.name});
      named != state.service_by_name.end() && named->second == service.id) {
    state.service_by_name.erase(named);
  }
  if (!service.deleted()) state.service_by_name[{service.tenant_id, service.name}] = service.id;
  state.services[service.id] = service;
}

const HostedService* service_named(const State& state, const std::string& tenant_id,
                                   const std::string& name) {
  auto it = state.service_by_name.find({tenant_id, name});
  return it == state.service_by_name.end() ? nullptr : state.service(it->second);
}

const HostedService* service_for_model(const State& state, const std::string& tenant_id,
                                       const std::string& model) {
  for (auto it = state.service_by_name.lower_bound({tenant_id, ""});
       it != state.service_by_name.end() && it->first.first == tenant_id; ++it) {
    const HostedService* service = state.service(it->second);
    if (service != nullptr && service->model == model) return service;
  }
  return nullptr;
}

std::vector<const Instance*> live_replicas(const State& state, const std::string& service_id) {
  std::vector<const Instance*> out;
  auto it = state.replicas_by_service.find(service_id);
  if (it == state.replicas_by_service.end()) return out;
  for (const std::string& id : it->second) out.push_back(state.instance(id));
  return out;
}

}  // namespace allot
