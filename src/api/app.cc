#include "api/app.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "api/openapi.h"
#include "api/port_access.h"
#include "api/port_proxy.h"
#include "api/reply.h"
#include "api/routes/admission.h"
#include "api/routes/books.h"
#include "api/routes/cluster.h"
#include "api/routes/identity.h"
#include "api/routes/money.h"
#include "api/routes/operations.h"
#include "api/routes/pools.h"
#include "api/routes/regions.h"
#include "api/routes_util.h"
#include "api/service_proxy.h"
#include "api/tunnel_hub.h"
#include "api/web_files.h"

namespace allot {
namespace {

// Matches `segments` against a pattern, collecting the `{name}` segments' values into `params`.
bool matches(std::string_view pattern, const std::vector<std::string>& segments,
             std::vector<std::string>& params) {
  params.clear();
  size_t index = 0;
  while (!pattern.empty()) {
    pattern.remove_prefix(1);  // The '/'.
    const size_t slash = pattern.find('/');
    const std::string_view part = pattern.substr(0, slash);
    pattern = slash == std::string_view::npos ? std::string_view{} : pattern.substr(slash);
    if (index >= segments.size()) return false;
    if (part.starts_with('{')) {
      params.push_back(segments[index]);
    } else if (part != segments[index]) {
      return false;
    }
    ++index;
  }
  return index == segments.size();
}

Result<Caller> authenticate_for(const Route& route, const State& state,
                                const std::string& authorization) {
  switch (route.auth) {
    case RouteAuth::kUser:
      return authenticate(state, authorization);
    case RouteAuth::kNode:
      return authenticate_node(state, authorization);
    case RouteAuth::kJoin:
      return Caller{};
  }
  return Caller{};
}

HttpResponse run_route(const Route& route, const HttpRequest& request, const Target& target,
                       std::vector<std::string> params, Context& ctx, const ApiOptions& options,
                       const Metrics& metrics, TunnelHub& tunnels, ServiceTraffic& traffic,
                       std::function<void(AuditEntry)> audit_later) {
  // Agents' heartbeats and waits are not people's calls: they stay out of the audit log.
  const bool mutating = request.method != "GET" && route.auth != RouteAuth::kNode;
  auto caller = authenticate_for(route, ctx.state(), request.authorization);
  Call call{request,
            target,
            ctx,
            caller.value_or(Caller{}),
            std::move(params),
            {},
            ctx.logs(),
            options,
            metrics,
            tunnels,
            std::move(audit_later),
            traffic};
  Result<HttpResponse> result =
      caller ? route.handler(call) : Result<HttpResponse>(std::unexpected(caller.error()));
  HttpResponse response = result ? std::move(*result) : error_reply(result.error());
  // A join is authenticated by its token, which the handler checks.
  response.authenticated = route.auth == RouteAuth::kJoin ? result.has_value() : caller.has_value();
  if (mutating) {
    std::string target_id = call.target_id;
    if (target_id.empty() && !call.params.empty()) target_id = call.params.front();
    ctx.audit(AuditEntry{.tenant_id = call.caller.tenant_id,
                         .user_id = call.caller.user_id,
                         .key_id = call.caller.key_id,
                         .method = request.method,
                         .path = target.path,
                         .target_id = std::move(target_id),
                         .status = response.status,
                         .error_code = result ? "" : std::string(code_name(result.error().code))});
  }
  return response;
}

HttpResponse run_view_route(const Route& route, const HttpRequest& request, const Target& target,
                            std::vector<std::string> params, const ReadView& view,
                            TunnelHub& tunnels) {
  auto caller = view.authenticate(request.authorization);
  if (!caller) return error_reply(caller.error());
  ViewCall call{target, view, std::move(*caller), std::move(params), tunnels};
  Result<HttpResponse> result = route.view(call);
  HttpResponse response = result ? std::move(*result) : error_reply(result.error());
  response.authenticated = true;
  return response;
}

HttpResponse method_not_allowed(const std::string& method) {
  return error_reply(
      Error{ErrorCode::kMethodNotAllowed, fmt::format("{} is not allowed here", method)});
}

}  // namespace

RouteTable::RouteTable(std::span<const Resource> resources, std::span<const Route> more) {
  // Every item path first: the routes view them, so the vector must not grow after.
  item_paths_.reserve(resources.size());
  for (const Resource& r : resources) item_paths_.push_back(std::string(r.path).append(r.item));
  for (size_t i = 0; i < resources.size(); ++i) {
    const Resource& r = resources[i];
    const std::string_view item = item_paths_[i];
    const Route standard[] = {{"POST", r.path, r.create},
                              {"PUT", r.path, r.put},
                              {"GET", r.path, r.list, RouteAuth::kUser, r.view_list},
                              {"GET", item, r.get, RouteAuth::kUser, r.view_get},
                              {"PATCH", item, r.update},
                              {"DELETE", item, r.remove}};
    for (const Route& route : standard) {
      if (route.handler != nullptr || route.view != nullptr) routes_.push_back(route);
    }
  }
  routes_.insert(routes_.end(), more.begin(), more.end());
}

std::vector<Route> join_routes(std::initializer_list<std::span<const Route>> lists) {
  std::vector<Route> all;
  for (std::span<const Route> routes : lists) all.insert(all.end(), routes.begin(), routes.end());
  return all;
}

// The domains' routes (api/routes/<domain>.cc), one domain after another.
std::vector<Route> all_routes() {
  return join_routes({identity_domain_routes(), cluster_domain_routes(), admission_domain_routes(),
                      money_domain_routes(), books_domain_routes(), pools_domain_routes(),
                      regions_domain_routes(), metrics_routes()});
}

App::App(Service& service, std::string version, Metrics& metrics, ApiOptions options)
    : service_(service),
      version_(std::move(version)),
      metrics_(metrics),
      options_(std::move(options)),
      routes_(all_routes()),
      tunnels_(std::make_unique<TunnelHub>()),
      reads_(options_.read_threads > 0 ? options_.read_threads : default_read_threads()) {}

App::~App() = default;

void App::handle(HttpRequest request, Responder respond) {
  // Every answer is timed, labelled by the route's pattern (not the path, whose ids would make a
  // series per object).
  auto route = std::make_shared<std::string>("unmatched");
  Responder timed = [this, route, method = request.method, start = std::chrono::steady_clock::now(),
                     respond = std::move(respond)](HttpResponse response) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    metrics_.record_http(method, *route, response.status, took.count());
    respond(std::move(response));
  };
  route_and_answer(std::move(request), *route, std::move(timed));
}

void App::route_and_answer(HttpRequest request, std::string& route, Responder respond) {
  if (request.target.starts_with(kPortPathPrefix)) {
    route = "/i/{instance}/{port}";
    return answer_port(std::move(request), std::move(respond));
  }
  if (request.target.starts_with(kServicePathPrefix)) {
    route = "/s/{service}";
    return answer_service(std::move(request), std::move(respond));
  }
  auto target = parse_target(request.target);
  if (!target) return respond(error_reply(target.error()));
  const std::string& path = target->path;
  if (path == "/healthz" || path == "/version" || path == "/readyz" || path == "/openapi.json") {
    route = path;
    if (request.method != "GET") return respond(method_not_allowed(request.method));
  }
  if (path == "/openapi.json") {
    return respond(HttpResponse{.status = 200, .body = std::string(openapi_document())});
  }
  if (path == "/healthz") return respond(json_reply(200, {{"status", "ok"}}));
  if (path == "/version") return respond(json_reply(200, {{"version", version_}}));
  if (path == "/readyz") {
    if (service_.ready()) return respond(json_reply(200, {{"status", "ready"}}));
    return respond(error_reply(Error{ErrorCode::kUnavailable, "the store is unavailable"}));
  }
  if ((request.method == "POST" && is_model_path(path)) ||
      (request.method == "GET" && path == kModelsPath)) {
    route = path;
    return answer_service(std::move(request), std::move(respond));
  }
  if (request.method == "GET" && model_in_path(request.target)) {
    route = "/v1/models/{model}";
    return answer_service(std::move(request), std::move(respond));
  }
  const bool api = !target->segments.empty() && target->segments.front() == "v1";
  if (!api && request.method == "GET" && path != "/metrics") {
    if (auto file = web_file(options_.web_dir, target->segments)) {
      route = "web";
      return respond(std::move(*file));
    }
  }
  std::vector<std::string> params;
  bool path_known = false;
  for (const Route& r : routes_) {
    if (!matches(r.pattern, target->segments, params)) continue;
    path_known = true;
    if (r.method != request.method) continue;
    route = r.pattern;
    if (r.view != nullptr) {
      return read(r, std::move(request), std::move(*target), std::move(params), std::move(respond));
    }
    service_.submit(
        [this, r, request = std::move(request), target = std::move(*target),
         params = std::move(params)](Context& ctx) mutable {
          return run_route(r, request, target, std::move(params), ctx, options_, metrics_,
                           *tunnels_, traffic_,
                           [this](AuditEntry entry) { audit_later(std::move(entry)); });
        },
        std::move(respond));
    return;
  }
  if (path_known) return respond(method_not_allowed(request.method));
  respond(error_reply(Error{ErrorCode::kNotFound, fmt::format("no endpoint {}", path)}));
}

void App::audit_later(AuditEntry entry) {
  service_.submit(
      [entry = std::move(entry)](Context& ctx) mutable {
        ctx.audit(std::move(entry));
        return HttpResponse{.status = 204};
      },
      [](const HttpResponse&) {});
}

void App::answer_port(HttpRequest request, Responder respond) {
  reads_.submit([this, request = std::move(request), respond = std::move(respond)](bool refused) {
    if (refused) {
      return respond(error_reply(Error{ErrorCode::kUnavailable, "the controller is busy"}));
    }
    respond(port_answer(request));
  });
}

HttpResponse App::port_answer(const HttpRequest& request) {
  auto path = parse_port_path(request.target);
  if (!path) return error_reply(path.error());
  const ShownInstance shown = service_.view().instance(path->instance_id);
  const Instance* instance = shown ? &shown->object() : nullptr;
  const PublishedPort* published = nullptr;
  if (instance != nullptr) {
    const auto& ports = instance->spec.ports;
    const auto found = std::ranges::find(ports, path->port, &PublishedPort::port);
    if (found != ports.end()) published = &*found;
  }
  const Error unknown{ErrorCode::kNotFound, fmt::format("instance {} publishes no port {}",
                                                        path->instance_id, path->port)};
  const std::string prefix = port_prefix(path->instance_id, path->port);
  std::string set_cookie;
  const std::string token = path->link.empty() ? link_cookie(request.cookie) : path->link;
  if (!request.authorization.empty()) {
    auto caller = service_.view().authenticate(request.authorization);
    if (!caller) return error_reply(caller.error());
    if (instance == nullptr || !may_see_tenant(*caller, instance->tenant_id)) {
      return error_reply(unknown);
    }
    if (auto ok = require_launcher(*caller); !ok) return error_reply(ok.error());
  } else if (!token.empty()) {
    if (!options_.sealer) {
      return error_reply(Error{ErrorCode::kUnauthenticated, "this deployment signs no links"});
    }
    auto expires = check_port_link(*options_.sealer, token, path->instance_id, path->port,
                                   SystemClock().now_ms());
    if (!expires) return error_reply(expires.error());
    if (!path->link.empty()) {
      set_cookie = fmt::format("{}={}; Path={}/; Max-Age={}; HttpOnly; SameSite=Lax", kLinkCookie,
                               token, prefix, (*expires - SystemClock().now_ms()) / 1000);
    }
  } else if (published == nullptr || !published->is_public) {
    return error_reply(Error{ErrorCode::kUnauthenticated,
                             "a published port needs the tenant's key (Authorization: Bearer) or "
                             "a signed link (allot ports INSTANCE)"});
  }
  if (published == nullptr) return error_reply(unknown);
  if (instance->state != InstanceState::kRunning || instance->node_id.empty()) {
    return error_reply(Error{ErrorCode::kConflict,
                             fmt::format("instance {} is {}: its ports answer while it runs",
                                         instance->id, instance_state_name(instance->state))});
  }
  if (path->bare) {
    const size_t query = request.target.find('?');
    return HttpResponse{
        .status = 308,
        .body = "",
        .location =
            prefix + "/" + (query == std::string::npos ? "" : request.target.substr(query))};
  }
  ProxiedRequest proxied{.node_id = instance->node_id,
                         .instance_id = instance->id,
                         .port = path->port,
                         .tls = published->protocol == "https",
                         .target = path->target,
                         .body = request.body,
                         .prefix = prefix,
                         .set_cookie = std::move(set_cookie),
                         .remote = request.remote};
  HttpResponse response;
  response.authenticated = true;
  response.relay = [this, proxied = std::move(proxied)](Exchange& exchange) mutable {
    return proxy_http(*tunnels_, std::move(proxied), exchange);
  };
  return response;
}

void App::read(const Route& route, HttpRequest request, Target target,
               std::vector<std::string> params, Responder respond) {
  reads_.submit([this, route, request = std::move(request), target = std::move(target),
                 params = std::move(params), respond = std::move(respond)](bool refused) mutable {
    if (refused) {
      return respond(error_reply(Error{ErrorCode::kUnavailable, "the controller is busy"}));
    }
    respond(run_view_route(route, request, target, std::move(params), service_.view(), *tunnels_));
  });
}

}  // namespace allot
