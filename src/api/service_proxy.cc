#include "api/service_proxy.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/port_proxy.h"
#include "api/reply.h"
#include "api/request.h"
#include "common/spawned.h"

namespace allot {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// How often a held request looks for a ready replica.
constexpr auto kHoldPoll = std::chrono::milliseconds(20);

// Requests that may be sent twice without harm, so that one whose replica cannot be reached may
// go to another.
bool idempotent(http::verb method) {
  return method == http::verb::get || method == http::verb::head || method == http::verb::options ||
         method == http::verb::put || method == http::verb::delete_;
}

awaitable<bool> refuse(Exchange& exchange, const Error& error, int retry_after_s) {
  HttpResponse answer = error_reply(error);
  if (retry_after_s > 0) answer.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  co_await exchange.answer(std::move(answer));
  co_return exchange.keep_alive;
}

awaitable<void> probe_one(TunnelHub& hub, ServiceTraffic& traffic, Endpoint endpoint,
                          int64_t timeout_ms) {
  auto status = co_await probe_http(hub, endpoint.node_id, endpoint.instance_id, endpoint.port,
                                    endpoint.readiness, timeout_ms);
  const TimeMs now_ms = SystemClock().now_ms();
  if (!status) {
    traffic.record_probe(endpoint.instance_id, false, status.error().message, now_ms);
  } else {
    const bool ready = *status >= 200 && *status < 400;
    traffic.record_probe(endpoint.instance_id, ready,
                         fmt::format("GET {} answered {}", endpoint.readiness, *status), now_ms);
  }
}

// One answer to a caller of another tenant: a 2xx is billed with its tokens, unless its usage
// could not be read (then it is counted and logged, and not billed); anything else is a failure.
void count_use(ServiceTraffic& traffic, const ServiceRequest& request, const AnswerTap& tap,
               const std::string& replica) {
  ServiceUseCount use{.service_id = request.route.id, .caller_tenant_id = request.caller_tenant_id};
  if (tap.status < 200 || tap.status > 299) {
    use.failed = 1;
  } else if (const TokenCount tokens = count_tokens(tap); tokens.malformed) {
    use.malformed = 1;
    spdlog::warn(
        "msg=\"an answer's usage could not be read; not billed\" service={} replica={} "
        "caller={} why=\"{}\"",
        request.route.id, replica, request.caller_tenant_id, tokens.why);
  } else {
    use.requests = 1;
    use.tokens = tokens.tokens;
  }
  const ServiceUsage priced{.price_per_request_micros = request.route.price_per_request_micros,
                            .price_per_1k_tokens_micros = request.route.price_per_1k_tokens_micros,
                            .requests = use.requests,
                            .tokens = use.tokens};
  traffic.meter().count(use, priced.charge().value_or(std::numeric_limits<int64_t>::max()));
}

}  // namespace

Result<ServicePath> parse_service_path(std::string_view target) {
  std::string_view rest = target.substr(kServicePathPrefix.size());
  const size_t end = std::min(rest.find('/'), rest.find('?'));
  ServicePath path{.key = std::string(rest.substr(0, end))};
  if (path.key.empty() || path.key.size() > 64) {
    return fail(ErrorCode::kNotFound, "a service's endpoint is /s/SERVICE/ (its id or name)");
  }
  if (end == std::string_view::npos || rest[end] == '?') {
    path.bare = true;
    path.target = "/";
    if (end != std::string_view::npos) path.target += rest.substr(end);
    return path;
  }
  path.target = std::string(rest.substr(end));
  return path;
}

bool is_model_path(std::string_view path) {
  return std::ranges::any_of(kModelRoutes, [path](const auto& route) {
    return route.first == "POST" && route.second == path;
  });
}

std::optional<std::string> model_in_path(std::string_view target) {
  auto parsed = parse_target(target);
  if (!parsed || parsed->segments.size() < 3 || parsed->segments[0] != "v1" ||
      parsed->segments[1] != "models") {
    return std::nullopt;
  }
  std::string model = parsed->segments[2];
  for (size_t i = 3; i < parsed->segments.size(); ++i) model += "/" + parsed->segments[i];
  return model;
}

Result<std::string> request_model(std::string_view body) {
  const nlohmann::json document = nlohmann::json::parse(body, nullptr, false);
  if (!document.is_object() || !document.contains("model") || !document["model"].is_string() ||
      document["model"].get_ref<const std::string&>().empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "the body must be a JSON object whose \"model\" names one of your services' "
                "models (GET /v1/models lists them)");
  }
  return document["model"].get<std::string>();
}

awaitable<bool> proxy_service(TunnelHub& hub, ServiceTraffic& traffic, ServiceRequest request,
                              Exchange& exchange, ServiceProxyOptions options) {
  const std::string& id = request.route.id;
  traffic.arrive(id, SystemClock().now_ms());
  auto stopped = std::make_shared<bool>(false);
  exchange.on_stop = [stopped] { *stopped = true; };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.hold_ms);
  const bool may_retry = idempotent(exchange.request.method());
  std::vector<std::string> tried;
  std::optional<Error> last_error;
  bool held = false;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  while (true) {
    std::optional<Endpoint> endpoint = traffic.acquire(id, tried);
    if (!endpoint) {
      if (!held) {
        if (traffic.stats(id).held >= options.max_held) {
          const Error busy{
              ErrorCode::kUnavailable,
              fmt::format("service {} holds {} requests already, waiting for a replica",
                          request.route.name, options.max_held)};
          co_return co_await refuse(exchange, busy, 1);
        }
        traffic.hold(id, 1);
        held = true;
      }
      if (*stopped || std::chrono::steady_clock::now() >= deadline) {
        traffic.hold(id, -1);
        if (last_error) co_return co_await refuse(exchange, *last_error, 0);
        const std::string why = traffic.waiting(id);
        const Error none{
            ErrorCode::kUnavailable,
            fmt::format("no replica of service {} was ready within {} s{}", request.route.name,
                        options.hold_ms / 1000, why.empty() ? "" : ": " + why)};
        co_return co_await refuse(exchange, none, 5);
      }
      pause.expires_after(kHoldPoll);
      boost::system::error_code ec;
      co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    if (held) {
      traffic.hold(id, -1);
      held = false;
    }
    const bool retry = may_retry && static_cast<int>(tried.size()) + 1 < options.max_attempts;
    std::optional<Error> unreached;
    ProxiedRequest proxied{.node_id = endpoint->node_id,
                           .instance_id = endpoint->instance_id,
                           .port = endpoint->port,
                           .target = request.target,
                           .body = request.body,
                           .prefix = request.prefix,
                           .remote = request.remote,
                           .replica = endpoint->instance_id};
    const bool metered = !request.caller_tenant_id.empty();
    AnswerTap tap;
    if (metered) proxied.tap = &tap;
    const bool keep =
        co_await proxy_http(hub, std::move(proxied), exchange, retry ? &unreached : nullptr);
    traffic.release(id, endpoint->instance_id, unreached.has_value());
    if (!unreached) {
      if (metered) count_use(traffic, request, tap, endpoint->instance_id);
      co_return keep;
    }
    last_error = std::move(unreached);
    tried.push_back(endpoint->instance_id);
  }
}

awaitable<void> probe_replicas(TunnelHub& hub, ServiceTraffic& traffic, int64_t every_ms,
                               int64_t timeout_ms) {
  auto executor = co_await asio::this_coro::executor;
  for (auto& [service_id, endpoint] : traffic.due_probes(SystemClock().now_ms(), every_ms)) {
    asio::co_spawn(executor, probe_one(hub, traffic, std::move(endpoint), timeout_ms),
                   log_escape("a replica's probe"));
  }
}

}  // namespace allot
