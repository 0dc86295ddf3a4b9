// Services: a tenant's endpoints served over replicas (core/model/service.h). Tenant members (not
// viewers) create, change and delete them; any key of the tenant reads them, with each replica's
// state and health. Another tenant's service is not there: 404.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/launch.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "api/wire/wire.h"
#include "common/limits.h"
#include "common/random.h"
#include "core/cluster/services.h"
#include "core/kernel/validate.h"
#include "store/cluster_json.h"

namespace allot {
namespace {

using nlohmann::json;

json revision_json(const ServiceRevision& r) {
  return {{"number", r.number},
          {"port", r.port},
          {"readiness", r.readiness},
          {"image", r.spec.image},
          {"spec", spec_document(r.spec)},
          {"created_at", format_time(r.created_at_ms)}};
}

json replica_json(const ServiceTraffic& traffic, const Instance& instance) {
  json out = {{"instance_id", instance.id},
              {"revision", instance.spec.service_revision},
              {"state", instance_state_name(instance.state)},
              {"reason", instance.reason},
              {"node_id", instance.node_id.empty() ? json(nullptr) : json(instance.node_id)},
              {"ready", false},
              {"in_flight", 0},
              {"served", 0},
              {"last_probe", nullptr},
              {"ready_since", nullptr}};
  if (auto health = traffic.health(instance.id)) {
    out["ready"] = health->ready && instance.state == InstanceState::kRunning;
    out["in_flight"] = health->outstanding;
    out["served"] = health->served;
    out["last_probe"] = health->last_probe.empty() ? json(nullptr) : json(health->last_probe);
    out["ready_since"] = time_or_null(health->ready ? health->ready_since_ms : 0);
  }
  for (const Endpoint& e : traffic.endpoints(instance.spec.service_id)) {
    if (e.instance_id == instance.id) out["draining"] = e.draining;
  }
  if (!out.contains("draining")) out["draining"] = false;
  return out;
}

// Tenths, so that a rate reads as people read it and the JSON stays short.
double tenths(double value) { return std::round(value * 10) / 10; }

// A service's prices at `now_ms`, and an announced rise that is not in force yet.
void put_prices(json& out, const HostedService& s, TimeMs now_ms) {
  const auto [per_request, per_1k_tokens] = s.prices_at(now_ms);
  out["price_per_request"] = money_text(per_request);
  out["price_per_1k_tokens"] = money_text(per_1k_tokens);
  out["price_change"] =
      s.rise_pending(now_ms)
          ? json{{"price_per_request", money_text(s.rising_price_per_request_micros)},
                 {"price_per_1k_tokens", money_text(s.rising_price_per_1k_tokens_micros)},
                 {"at", format_time(s.prices_rise_at_ms)}}
          : json(nullptr);
}

json service_json(const State& state, const ServiceTraffic& traffic, const HostedService& s,
                  TimeMs now_ms) {
  json revisions = json::array();
  for (const ServiceRevision& r : s.revisions) revisions.push_back(revision_json(r));
  json replicas = json::array();
  int ready = 0;
  for (const Instance* instance : live_replicas(state, s.id)) {
    replicas.push_back(replica_json(traffic, *instance));
    if (replicas.back()["ready"].get<bool>()) ++ready;
  }
  const TrafficStats stats = traffic.stats(s.id);
  json out = {
      {"id", s.id},
      {"tenant_id", s.tenant_id},
      {"project_id", s.project_id},
      {"name", s.name},
      {"model", s.model.empty() ? json(nullptr) : json(s.model)},
      {"url", fmt::format("/s/{}/", s.id)},
      {"min_replicas", s.min_replicas},
      {"max_replicas", s.max_replicas},
      {"target_rps", s.target_rps},
      {"target_concurrency", s.target_concurrency},
      {"scale_to_zero_after_s", s.scale_to_zero_after_ms / 1000},
      {"ready_timeout_s", s.ready_timeout_ms / 1000},
      {"spot_fallback", s.spot_fallback},
      {"shared", s.shared},
      {"revision", s.revision},
      {"serving_revision", s.serving_revision == 0 ? json(nullptr) : json(s.serving_revision)},
      {"rollout", {{"state", s.rollout}, {"reason", s.rollout_reason}}},
      {"desired", s.desired},
      {"ready_replicas", ready},
      {"scale_reason", s.scale_reason},
      {"scaled_at", time_or_null(s.scaled_at_ms)},
      {"restarts", s.restarts},
      {"revisions", revisions},
      {"replicas", replicas},
      {"traffic",
       {{"rps", tenths(stats.rps_stable)},
        {"rps_recent", tenths(stats.rps_panic)},
        {"concurrency", tenths(stats.concurrency_stable)},
        {"in_flight", stats.in_flight},
        {"held", stats.held},
        {"last_request_at", time_or_null(stats.last_request_ms)}}},
      {"created_at", format_time(s.created_at_ms)},
      {"updated_at", format_time(s.updated_at_ms)},
      {"deleted_at", time_or_null(s.deleted_at_ms)}};
  put_prices(out, s, now_ms);
  return out;
}

json service_json(const Call& call, const std::string& id) {
  return service_json(call.ctx.state(), call.traffic, *call.ctx.state().service(id),
                      call.ctx.now_ms());
}

// The proxy finds a service by its name and model from the moment it is made or changed, not
// from the controller's next round.
void publish_route(Call& call, const HostedService& s) {
  call.traffic.publish(ServiceRoute::of(s), call.traffic.endpoints(s.id),
                       call.traffic.waiting(s.id));
}

// The settings a create or an update may carry, all optional here.
struct Settings {
  std::optional<int64_t> min_replicas;
  std::optional<int64_t> max_replicas;
  std::optional<int64_t> target_rps;
  std::optional<int64_t> target_concurrency;
  std::optional<int64_t> scale_to_zero_after_s;
  std::optional<int64_t> ready_timeout_s;
  std::optional<int64_t> port;
  std::optional<std::string> readiness;
  std::optional<std::string> model;
  std::optional<bool> spot_fallback;
  std::optional<bool> shared;
  std::optional<int64_t> price_per_request;  // Micros.
  std::optional<int64_t> price_per_1k_tokens;
  json replica;  // Launch fields; null: none.
};

// An optional price field: a decimal string of money ("0.002").
Result<std::optional<int64_t>> read_price(JsonBody& body, const char* name) {
  const std::optional<std::string> text = body.optional_string(name);
  if (!text) return std::optional<int64_t>();
  ALLOT_TRY_LET(const int64_t micros, read_money(name, *text));
  if (micros < 0) return fail(ErrorCode::kInvalidArgument, fmt::format("'{}' is 0 or more", name));
  return std::optional<int64_t>(micros);
}

Result<Settings> read_settings(JsonBody& body) {
  Settings s;
  s.min_replicas = body.optional_int("min_replicas", 0, limits::kMaxServiceReplicas);
  s.max_replicas = body.optional_int("max_replicas", 1, limits::kMaxServiceReplicas);
  s.target_rps = body.optional_int("target_rps", 0, limits::kMaxServiceTarget);
  s.target_concurrency = body.optional_int("target_concurrency", 0, limits::kMaxServiceTarget);
  s.scale_to_zero_after_s =
      body.optional_int("scale_to_zero_after_s", 0, limits::kMaxScaleToZeroMs / 1000);
  s.ready_timeout_s = body.optional_int("ready_timeout_s", 1, limits::kMaxReadyTimeoutMs / 1000);
  s.port = body.optional_int("port", 1, 65535);
  s.readiness = body.optional_string("readiness");
  s.model = body.optional_string("model");
  s.spot_fallback = body.optional_bool("spot_fallback");
  s.shared = body.optional_bool("shared");
  ALLOT_TRY_ASSIGN(s.price_per_request, read_price(body, "price_per_request"));
  ALLOT_TRY_ASSIGN(s.price_per_1k_tokens, read_price(body, "price_per_1k_tokens"));
  s.replica = body.optional_json("replica");
  return s;
}

// A replica's spec from the launch fields of "replica": it runs until stopped and serves `port`.
Result<InstanceSpec> replica_spec(const Call& call, const std::string& tenant_id,
                                  const json& fields, int port) {
  if (!fields.is_object()) {
    return fail(ErrorCode::kInvalidArgument,
                "'replica' must be an object of launch fields (image, gpus, command, ...)");
  }
  if (fields.contains("ports") || fields.contains("nodes") || fields.contains("project_id")) {
    return fail(ErrorCode::kInvalidArgument,
                "a replica's launch fields hold no ports, nodes or project_id: the service "
                "publishes 'port' and runs each replica on one node");
  }
  JsonBody launch_body = JsonBody::from_document(fields);
  ALLOT_TRY_LET(Launch launch, read_launch(launch_body));
  InstanceSpec spec = std::move(launch.spec);
  spec.interactive = true;
  spec.ports = {PublishedPort{.port = port}};
  if (spec.image.empty()) spec.image = call.options.default_image;
  ALLOT_TRY_ASSIGN(spec.volumes, resolve_volumes(call, tenant_id, std::move(spec.volumes)));
  return spec;
}

// POST /v1/services
Result<HttpResponse> create_service(Call& call) {
  JsonBody body(call.request.body);
  const std::string name = body.required_string("name");
  const std::optional<std::string> project_id = body.optional_string("project_id");
  ALLOT_TRY_LET(Settings s, read_settings(body));
  ALLOT_TRY(body.finish());
  if (!s.port) return fail(ErrorCode::kMissingField, "'port' is required: where replicas serve");
  if (s.replica.is_null()) {
    return fail(ErrorCode::kMissingField, "'replica' is required: what each replica runs");
  }
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const Project* project, project_for(call, project_id));
  const int port = static_cast<int>(*s.port);
  ALLOT_TRY_LET(InstanceSpec spec, replica_spec(call, project->tenant_id, s.replica, port));
  const int min = static_cast<int>(s.min_replicas.value_or(1));
  HostedService service{
      .id = call.ctx.ids().new_id("svc"),
      .tenant_id = project->tenant_id,
      .project_id = project->id,
      .user_id = call.caller.user_id,
      .name = name,
      .model = s.model.value_or(""),
      .min_replicas = min,
      .max_replicas = static_cast<int>(s.max_replicas.value_or(std::max(min, 1))),
      .target_rps = static_cast<int>(s.target_rps.value_or(0)),
      .target_concurrency = static_cast<int>(s.target_concurrency.value_or(0)),
      .scale_to_zero_after_ms = s.scale_to_zero_after_s.value_or(0) * 1000,
      .ready_timeout_ms = s.ready_timeout_s.value_or(300) * 1000,
      .spot_fallback = s.spot_fallback.value_or(false),
      .shared = s.shared.value_or(false),
      .price_per_request_micros = s.price_per_request.value_or(0),
      .price_per_1k_tokens_micros = s.price_per_1k_tokens.value_or(0),
      .revisions = {ServiceRevision{
          .spec = std::move(spec), .port = port, .readiness = s.readiness.value_or("/")}}};
  const std::string id = service.id;
  ALLOT_TRY(call.ctx.apply(CreateService{std::move(service)}));
  publish_route(call, *call.ctx.state().service(id));
  call.target_id = id;
  return json_reply(201, service_json(call, id));
}

// A service the caller may see, by id or by its tenant's name for it.
Result<const HostedService*> path_service(const Call& call) {
  const std::string& key = call.params.front();
  const State& state = call.ctx.state();
  const HostedService* found = check_id("service id", key, "svc")
                                   ? state.service(key)
                                   : service_named(state, call.caller.tenant_id, key);
  if (found == nullptr || found->deleted() || !may_see_tenant(call.caller, found->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no service {}", key.size() <= 64 ? key : "…"));
  }
  return found;
}

// What another tenant sees of a shared service: what it is and what its calls cost, nothing of
// its replicas, revisions or traffic.
json shared_json(const HostedService& s, TimeMs now_ms) {
  json out = {{"id", s.id},
              {"name", s.name},
              {"model", s.model.empty() ? json(nullptr) : json(s.model)},
              {"url", fmt::format("/s/{}/", s.id)},
              {"shared", true}};
  put_prices(out, s, now_ms);
  return out;
}

// GET /v1/services/{id or name}; another tenant's shared service, as its callers see it.
Result<HttpResponse> get_service(Call& call) {
  ALLOT_TRY_LET(const HostedService* found, service_by_key(call, call.params.front()));
  if (found != nullptr && !found->deleted() && found->shared &&
      !may_see_tenant(call.caller, found->tenant_id)) {
    return json_reply(200, shared_json(*found, call.ctx.now_ms()));
  }
  ALLOT_TRY_LET(const HostedService* service, path_service(call));
  return json_reply(200, service_json(call.ctx.state(), call.traffic, *service, call.ctx.now_ms()));
}

// GET /v1/services?shared=true: other tenants' services shared with the caller's, as their
// callers see them, by id.
Result<HttpResponse> list_shared_services(const Call& call, const Page& page) {
  if (call.target.query.contains("tenant_id") || call.target.query.contains("project_id")) {
    return fail(ErrorCode::kInvalidArgument, "shared=true takes no tenant_id or project_id");
  }
  return page_of(
      call.ctx.state().services, page,
      [&](const HostedService& s) {
        return !s.deleted() && s.shared && !may_see_tenant(call.caller, s.tenant_id);
      },
      [&](const HostedService& s) { return shared_json(s, call.ctx.now_ms()); });
}

// GET /v1/services[?tenant_id=&project_id=]: live services, by id.
Result<HttpResponse> list_services(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "project_id", "shared"}));
  if (auto shared = call.target.query.find("shared"); shared != call.target.query.end()) {
    if (shared->second != "true" && shared->second != "false") {
      return fail(ErrorCode::kInvalidArgument, "shared must be true or false");
    }
    if (shared->second == "true") return list_shared_services(call, page);
  }
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  const auto project = call.target.query.find("project_id");
  return page_of(
      call.ctx.state().services, page,
      [&](const HostedService& s) {
        return !s.deleted() && may_see_tenant(call.caller, s.tenant_id) &&
               (!tenant || s.tenant_id == *tenant) &&
               (project == call.target.query.end() || s.project_id == project->second);
      },
      [&](const HostedService& s) {
        return service_json(call.ctx.state(), call.traffic, s, call.ctx.now_ms());
      });
}

// PATCH /v1/services/{id or name}: settings, and a new revision when "replica", "port" or
// "readiness" changes what replicas run.
Result<HttpResponse> update_service(Call& call) {
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const HostedService* service, path_service(call));
  JsonBody body(call.request.body);
  ALLOT_TRY_LET(Settings s, read_settings(body));
  ALLOT_TRY(body.finish());
  if (s.spot_fallback) {
    return fail(ErrorCode::kInvalidArgument, "spot_fallback is set when a service is made");
  }
  UpdateService command{.id = service->id,
                        .model = s.model,
                        .shared = s.shared,
                        .price_per_request_micros = s.price_per_request,
                        .price_per_1k_tokens_micros = s.price_per_1k_tokens};
  auto narrow = [](const std::optional<int64_t>& v) -> std::optional<int> {
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  command.min_replicas = narrow(s.min_replicas);
  command.max_replicas = narrow(s.max_replicas);
  command.target_rps = narrow(s.target_rps);
  command.target_concurrency = narrow(s.target_concurrency);
  if (s.scale_to_zero_after_s) command.scale_to_zero_after_ms = *s.scale_to_zero_after_s * 1000;
  if (s.ready_timeout_s) command.ready_timeout_ms = *s.ready_timeout_s * 1000;
  if (!s.replica.is_null() || s.port || s.readiness) {
    const ServiceRevision* current = service->revision_of(service->revision);
    if (current == nullptr) return fail(ErrorCode::kInternal, "the current revision is missing");
    ServiceRevision next = *current;
    if (s.port) next.port = static_cast<int>(*s.port);
    if (s.readiness) next.readiness = *s.readiness;
    if (!s.replica.is_null()) {
      // The fields given change the running revision's; the rest are kept (env and labels name
      // by name, a GPU request whole).
      const json fields =
          s.replica.is_object()
              ? with_template(LaunchTemplate{.fields = launch_fields(current->spec)}, s.replica)
              : s.replica;
      ALLOT_TRY_ASSIGN(next.spec, replica_spec(call, service->tenant_id, fields, next.port));
    } else {
      next.spec.ports = {PublishedPort{.port = next.port}};
    }
    command.revision = std::move(next);
  }
  const std::string id = service->id;
  call.target_id = id;
  ALLOT_TRY(call.ctx.apply(command));
  publish_route(call, *call.ctx.state().service(id));
  return json_reply(200, service_json(call, id));
}

// DELETE /v1/services/{id or name}: its replicas are stopped by the controller.
Result<HttpResponse> delete_service(Call& call) {
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const HostedService* service, path_service(call));
  const std::string id = service->id;
  call.target_id = id;
  ALLOT_TRY(call.ctx.apply(DeleteService{.id = id}));
  call.traffic.remove_service(id);
  return json_reply(200, service_json(call, id));
}

constexpr Resource kResources[] = {
    {.path = "/v1/services",
     .create = create_service,
     .list = list_services,
     .get = get_service,
     .update = update_service,
     .remove = delete_service},
};

}  // namespace

Result<const HostedService*> service_by_key(const Call& call, const std::string& key) {
  const State& state = call.ctx.state();
  if (check_id("service id", key, "svc")) return state.service(key);
  if (const HostedService* own = service_named(state, call.caller.tenant_id, key); own != nullptr) {
    return own;
  }
  const HostedService* found = nullptr;
  std::vector<std::string> ids;
  for (const auto& [id, s] : state.services) {
    if (s.deleted() || !s.shared || s.name != key || may_see_tenant(call.caller, s.tenant_id)) {
      continue;
    }
    found = &s;
    ids.push_back(id);
  }
  if (ids.size() > 1) {
    return fail(ErrorCode::kConflict,
                fmt::format("{} services shared with you are named {}: name one by its id ({})",
                            ids.size(), key, fmt::join(ids, ", ")));
  }
  return found;
}

std::span<const Route> service_routes() { return route_table<kResources>(); }

}  // namespace allot
