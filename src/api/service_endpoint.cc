// The App's side of services' endpoints (/s/SERVICE/...): who may call one, and the relay and
// probes behind it (api/service_proxy.h).
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/service_proxy.h"
#include "api/tunnel_hub.h"

namespace allot {
namespace {

// Who calls a service: a key of its tenant (any service of it; an operator admin's, any service
// by id), or a service key (its one service: of the service's tenant, or another tenant's caller
// key, which reaches the service while it is shared).
struct Who {
  std::string tenant_id;   // The services it may reach are this tenant's; empty: an operator admin.
  std::string service_id;  // A service key's service; empty: any of the tenant's.
  std::string caller_tenant_id;  // Another tenant, billed for its use; empty: not billed.

  bool admits(const std::optional<ServiceRoute>& route) const {
    return route && (service_id.empty() || route->id == service_id) &&
           (caller_tenant_id.empty() || route->shared);
  }
};

Result<Who> who_calls(const ReadView& view, const std::string& authorization) {
  if (authorization.empty()) {
    return fail(ErrorCode::kUnauthenticated,
                "a service's endpoint needs a key of its tenant or a service key "
                "(Authorization: Bearer)");
  }
  ALLOT_TRY_LET(const std::string_view token, bearer_token(authorization));
  if (token.starts_with(kServiceKeyStart)) {
    const std::optional<ServiceKey> key = view.service_key(token);
    if (!key || key->revoked_at_ms != 0) {
      return fail(ErrorCode::kUnauthenticated, "unknown or revoked service key");
    }
    return Who{.tenant_id = key->tenant_id,
               .service_id = key->service_id,
               .caller_tenant_id = key->billed() ? key->caller_tenant_id : std::string()};
  }
  ALLOT_TRY_LET(const Caller caller, view.authenticate(authorization));
  return Who{.tenant_id = caller.is_operator_admin() ? std::string() : caller.tenant_id};
}

// GET /v1/models and /v1/models/{model}, as OpenAI answers them: the models of the services the
// caller may reach, or the one named (percent-decoded; a model id may hold slashes). Nullopt for
// any other request.
std::optional<HttpResponse> models_answer(const ServiceTraffic& traffic, const Who& who,
                                          const std::string& target) {
  const bool list = target == kModelsPath || target.starts_with(kModelsQuery);
  const std::optional<std::string> named = model_in_path(target);
  if (!list && !named) return std::nullopt;
  nlohmann::json models = nlohmann::json::array();
  for (const ServiceRoute& r : traffic.with_models(who.tenant_id)) {
    if (!who.admits(r) || (named && r.model != *named)) continue;
    models.push_back({{"id", r.model}, {"object", "model"}, {"owned_by", r.name}});
  }
  if (list) return json_reply(200, {{"object", "list"}, {"data", models}});
  if (models.empty()) {
    return error_reply(Error{
        ErrorCode::kNotFound,
        fmt::format("no service of yours serves model '{}'", named->size() <= 128 ? *named : "…")});
  }
  return json_reply(200, models.front());
}

}  // namespace

void App::answer_service(HttpRequest request, Responder respond) {
  reads_.submit([this, request = std::move(request), respond = std::move(respond)](bool refused) {
    if (refused) {
      return respond(error_reply(Error{ErrorCode::kUnavailable, "the controller is busy"}));
    }
    respond(service_answer(request));
  });
}

HttpResponse App::service_answer(const HttpRequest& request) {
  const bool by_path = request.target.starts_with(kServicePathPrefix);
  ServicePath path;
  if (by_path) {
    auto parsed = parse_service_path(request.target);
    if (!parsed) return error_reply(parsed.error());
    path = std::move(*parsed);
  }
  auto caller = who_calls(service_.view(), request.authorization);
  if (!caller) return error_reply(caller.error());
  const Who& who = *caller;
  std::optional<ServiceRoute> route;
  std::string prefix;
  if (by_path) {
    route = traffic_.find(who.tenant_id, path.key);
    if (!who.admits(route)) {
      return error_reply(Error{ErrorCode::kNotFound, fmt::format("no service {}", path.key)});
    }
    prefix = std::string(kServicePathPrefix) + path.key;
    if (path.bare) {
      const size_t query = path.target.find('?');
      return HttpResponse{
          .status = 308,
          .body = "",
          .location = prefix + "/" + (query == std::string::npos ? "" : path.target.substr(query))};
    }
  } else if (auto models = models_answer(traffic_, who, request.target)) {
    return *std::move(models);
  } else {
    auto model = request_model(request.body);
    if (!model) return error_reply(model.error());
    route = traffic_.find_model(who.tenant_id, *model);
    if (!who.admits(route)) {
      return error_reply(
          Error{ErrorCode::kNotFound, fmt::format("no service of yours serves model '{}'",
                                                  model->size() <= 128 ? *model : "…")});
    }
    path.target = request.target;
  }
  // A priced call holds what it can cost before it goes on, and gives it back once it has ended
  // and been counted: calls at once cannot spend more than the caller has.
  std::shared_ptr<void> held;
  if (!who.caller_tenant_id.empty() && route->priced) {
    const int64_t bound = call_bound_micros(route->price_per_request_micros,
                                            route->price_per_1k_tokens_micros, request.body);
    if (!traffic_.meter().hold(who.caller_tenant_id, bound)) {
      return error_reply(
          Error{ErrorCode::kInsufficientFunds,
                fmt::format("tenant {} has no money left to pay for service {} (promotional "
                            "credit does not pay for calls): top up its balance",
                            who.caller_tenant_id, route->id)});
    }
    held = std::shared_ptr<void>(nullptr, [meter = &traffic_.meter(), caller = who.caller_tenant_id,
                                           bound](void*) { meter->release(caller, bound); });
  }
  ServiceRequest relayed{.route = *route,
                         .target = path.target,
                         .prefix = prefix,
                         .body = request.body,
                         .remote = request.remote,
                         .caller_tenant_id = who.caller_tenant_id,
                         .held = std::move(held)};
  HttpResponse response;
  response.authenticated = true;
  response.relay = [this, relayed = std::move(relayed)](Exchange& exchange) mutable {
    return proxy_service(*tunnels_, traffic_, std::move(relayed), exchange,
                         ServiceProxyOptions{.hold_ms = options_.service_hold_ms});
  };
  return response;
}

boost::asio::awaitable<void> App::probe_services() {
  return probe_replicas(*tunnels_, traffic_, options_.probe_interval_ms,
                        std::max<int64_t>(options_.probe_interval_ms, 1'000));
}

}  // namespace allot
