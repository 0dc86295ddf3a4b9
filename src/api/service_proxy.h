// The relay behind a service's endpoint (/s/SERVICE/...): each request goes to the ready replica
// with the fewest requests in flight, through its node's tunnel, its answer streamed back as it
// comes (server-sent events, chunked answers and WebSockets pass through unbuffered). A request
// that finds no ready replica (a service at zero, or all of them starting) is held until one is
// ready, within bounds; an idempotent request whose replica cannot be reached goes to another.
// And the readiness prober that says which replicas are ready.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/exchange.h"
#include "api/service_traffic.h"
#include "api/tunnel_hub.h"

namespace allot {

inline constexpr std::string_view kServicePathPrefix = "/s/";

// A request target under /s/: the service's id or name, and what its replica is asked for.
struct ServicePath {
  std::string key;
  std::string target;  // At least "/", with the query.
  bool bare = false;   // "/s/SERVICE" without its slash: redirected to add it.
};
[[nodiscard]] Result<ServicePath> parse_service_path(std::string_view target);

// GET /v1/models: the caller's tenant's services' models, as OpenAI lists models.
inline constexpr std::string_view kModelsPath = "/v1/models";
inline constexpr std::string_view kModelsQuery = "/v1/models?";
// The OpenAI-style routes the proxy answers outside the route table: POSTs routed by the body's
// "model" to the caller's tenant's service that declares it, and the list of models.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kModelRoutes = {{
    {"POST", "/v1/chat/completions"},
    {"POST", "/v1/completions"},
    {"POST", "/v1/embeddings"},
    {"GET", kModelsPath},
}};
// Whether a POST to `path` is routed by model.
bool is_model_path(std::string_view path);
// The model a GET /v1/models/{model} names, percent-decoded (it may hold slashes, escaped or
// not); nullopt for any other target.
std::optional<std::string> model_in_path(std::string_view target);
// The "model" of such a request's JSON body; kInvalidArgument when there is none.
[[nodiscard]] Result<std::string> request_model(std::string_view body);

struct ServiceProxyOptions {
  int64_t hold_ms = 60'000;  // How long a request waits for a ready replica.
  int max_held = 256;        // Requests one service may hold at once; past it, 503 at once.
  int max_attempts = 3;      // Replicas an idempotent request is tried on.
};

struct ServiceRequest {
  ServiceRoute route;
  std::string target;  // What the replica sees: the path under /s/SERVICE, and the query.
  std::string prefix;  // "/s/SERVICE", sent as X-Forwarded-Prefix.
  std::string body;
  std::string remote;
  // Another tenant calling a shared service with its caller key: its use is counted (answers,
  // and tokens from each answer's usage) and billed to it. Empty: not counted.
  std::string caller_tenant_id;
  // What the call holds of the caller's money, given back when the request (and its count) is
  // done with.
  std::shared_ptr<void> held;
};

boost::asio::awaitable<bool> proxy_service(TunnelHub& hub, ServiceTraffic& traffic,
                                           ServiceRequest request, Exchange& exchange,
                                           ServiceProxyOptions options);

// Probes every running replica whose last probe is `every_ms` old, each on its own; a 2xx or 3xx
// within `timeout_ms` is ready.
boost::asio::awaitable<void> probe_replicas(TunnelHub& hub, ServiceTraffic& traffic,
                                            int64_t every_ms, int64_t timeout_ms);

}  // namespace allot
