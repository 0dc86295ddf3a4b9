#include "api/app.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/reply.h"

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
                       std::vector<std::string> params, Context& ctx, LogStore& logs,
                       const ApiOptions& options) {
  // Agents' heartbeats and waits are not people's calls: they stay out of the audit log.
  const bool mutating = request.method != "GET" && route.auth != RouteAuth::kNode;
  auto caller = authenticate_for(route, ctx.state(), request.authorization);
  Call call{request, target, ctx, caller.value_or(Caller{}), std::move(params), {}, logs, options};
  Result<HttpResponse> result =
      caller ? route.handler(call) : Result<HttpResponse>(std::unexpected(caller.error()));
  HttpResponse response = result ? std::move(*result) : error_reply(result.error());
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

}  // namespace

App::App(Service& service, std::string version, LogStore& logs, ApiOptions options)
    : service_(service), version_(std::move(version)), logs_(logs), options_(options) {
  for (auto routes :
       {identity_routes(), node_routes(), agent_routes(), instance_routes(), rules_routes(),
        price_routes(), invoice_routes(), usage_routes(), budget_routes(), money_routes(),
        finance_asset_routes(), finance_book_routes(), finance_report_routes(), pool_routes(),
        spot_routes(), region_routes(), idle_routes()}) {
    routes_.insert(routes_.end(), routes.begin(), routes.end());
  }
}

void App::handle(HttpRequest request, Responder respond) {
  auto target = parse_target(request.target);
  if (!target) return respond(error_reply(target.error()));
  const std::string& path = target->path;
  if (path == "/healthz") return respond(json_reply(200, {{"status", "ok"}}));
  if (path == "/version") return respond(json_reply(200, {{"version", version_}}));
  if (path == "/readyz") {
    if (service_.ready()) return respond(json_reply(200, {{"status", "ready"}}));
    return respond(error_reply(Error{ErrorCode::kUnavailable, "the store is unavailable"}));
  }
  std::vector<std::string> params;
  bool path_known = false;
  for (const Route& route : routes_) {
    if (!matches(route.pattern, target->segments, params)) continue;
    path_known = true;
    if (route.method != request.method) continue;
    service_.submit(
        [this, route, request = std::move(request), target = std::move(*target),
         params = std::move(params)](Context& ctx) mutable {
          return run_route(route, request, target, std::move(params), ctx, logs_, options_);
        },
        std::move(respond));
    return;
  }
  if (path_known) {
    return respond(error_reply(Error{ErrorCode::kMethodNotAllowed,
                                     fmt::format("{} is not allowed here", request.method)}));
  }
  respond(error_reply(Error{ErrorCode::kNotFound, fmt::format("no endpoint {}", path)}));
}

}  // namespace allot
