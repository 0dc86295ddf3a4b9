// The API: routes requests to handlers, authenticates them, runs them on the core thread through
// the Service, and writes an audit entry for every mutating call.
#pragma once

#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.h"
#include "api/http.h"
#include "api/launch.h"
#include "api/log_store.h"
#include "api/metrics.h"
#include "api/read_pool.h"
#include "api/read_view.h"
#include "api/request.h"
#include "api/service.h"
#include "api/service_traffic.h"
#include "common/address_policy.h"
#include "common/seal.h"
#include "reports/invoice_render.h"

namespace allot {

class TunnelHub;  // api/tunnel_hub.h: it pulls in Beast, which only the network's files need.

// Settings of the API that come from the daemon's config.
struct ApiOptions {
  int64_t stop_grace_ms = 10'000;         // SIGTERM to SIGKILL for stopped instances.
  int64_t preempt_grace_ms = 10'000;      // The same for preempted spot work.
  std::string default_image;              // For launches that name no image.
  LaunchTemplates templates;              // The operator's launch templates, by name.
  std::shared_ptr<const Sealer> sealer;   // Seals registry passwords; null: none can be set.
  int64_t long_poll_ms = 20'000;          // How long an agent's wait is held.
  int64_t heartbeat_interval_ms = 2'000;  // What agents are told to use.
  std::string web_dir;                    // The dashboard's built files; empty: none.
  AddressAllowList webhook_allow;         // Internal addresses webhooks may reach nonetheless.
  int64_t max_volume_gb = 10'000;         // The largest volume a tenant may create.
  std::set<std::string> nfs_regions;      // Regions whose nodes mount an NFS export for volumes.
  bool public_ports = true;               // Ports may be published without a key.
  int64_t service_hold_ms = 60'000;       // How long a service's request waits for a replica.
  int64_t probe_interval_ms = 1'000;      // How often each running replica's readiness is probed.
  billing::Issuer issuer;                 // Who issues invoices, in what currency, on what terms.
  int read_threads = 0;                   // Threads answering reads; 0: default_read_threads().
};

// Everything a handler gets.
struct Call {
  const HttpRequest& request;
  const Target& target;
  Context& ctx;
  Caller caller;
  std::vector<std::string> params;  // The values of the path's {name} segments, in order.
  std::string target_id;            // Set by handlers that create something, for the audit log.
  LogStore& logs;
  const ApiOptions& options;
  const Metrics& metrics;
  // The nodes' tunnels, for the answers that relay through them; touched by relays only, on the
  // network thread.
  TunnelHub& tunnels;
  // Writes an audit entry in a later batch, from any thread: for what a relay learns after the
  // answer (how an exec session ended).
  std::function<void(AuditEntry)> audit_later;
  // Services' replicas' health and traffic, as the proxy and prober see them; the service routes
  // publish a service's name and model at once.
  ServiceTraffic& traffic;
};

using RouteHandler = Result<HttpResponse> (*)(Call&);

// Everything a read answered from the read view gets, on a read thread.
struct ViewCall {
  const Target& target;
  const ReadView& view;
  Caller caller;
  std::vector<std::string> params;  // As in Call.
  TunnelHub& tunnels;               // As in Call.
};

using ViewHandler = Result<HttpResponse> (*)(ViewCall&);

// Who may call a route: people with API keys, node agents with their credential, or callers whose
// credential the handler checks itself (an agent's join token, a browser shell's ticket).
enum class RouteAuth { kUser, kNode, kJoin };

// A route has a handler, run on the core thread, or, for a GET by a user, a view handler, run on
// a read thread against the read view instead.
struct Route {
  std::string_view method;
  std::string_view pattern;  // e.g. "/v1/projects/{id}"
  RouteHandler handler;
  RouteAuth auth = RouteAuth::kUser;
  ViewHandler view = nullptr;
};

// A REST resource, declared once instead of as a run of routes: its collection's path and the
// handlers of its standard routes, each optional. On the collection: POST (create), PUT (put),
// GET (list); on one item, at `path` + `item`: GET (get), PATCH (update), DELETE (remove). Routes
// outside that shape (e.g. POST /v1/nodes/{id}/cordon) stay listed as Routes. A route file
// declares its resources and other routes and returns route_table<kResources, kMore>(). Requests
// match the first route whose pattern and method fit; no two routes of one method fit one path,
// so the order the table expands to does not change which handler answers. `view_list` and
// `view_get` answer the two GETs from the read view instead of `list` and `get`.
struct Resource {
  std::string_view path;  // e.g. "/v1/nodes"
  RouteHandler create = nullptr;
  RouteHandler put = nullptr;
  RouteHandler list = nullptr;
  RouteHandler get = nullptr;
  RouteHandler update = nullptr;
  RouteHandler remove = nullptr;
  ViewHandler view_list = nullptr;
  ViewHandler view_get = nullptr;
  std::string_view item = "/{id}";
};

// The routes of some resources, in the order above, resource by resource, then some more routes.
// Built once, at startup; it owns the item paths its routes point to, so it stays where it is.
class RouteTable {
 public:
  RouteTable(std::span<const Resource> resources, std::span<const Route> more);
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  [[nodiscard]] std::span<const Route> routes() const { return routes_; }

 private:
  std::vector<std::string> item_paths_;
  std::vector<Route> routes_;
};

inline constexpr std::span<const Route> kNoRoutes;

// The routes of `resources` then `more` (arrays of static storage), built on first use.
template <const auto& resources, const auto& more = kNoRoutes>
std::span<const Route> route_table() {
  static const RouteTable table(resources, more);
  return table.routes();
}

// Returns early from a function returning Result<...> when a Status-returning call fails.
#define ALLOT_TRY(expr)                                          \
  if (auto allot_try_status = (expr); !allot_try_status) {       \
    return std::unexpected(std::move(allot_try_status).error()); \
  }

// Assigns the value of a Result to `lhs`, or returns early with its error.
#define ALLOT_TRY_ASSIGN(lhs, expr)                                \
  do {                                                             \
    auto allot_try_result = (expr);                                \
    if (!allot_try_result) {                                       \
      return std::unexpected(std::move(allot_try_result).error()); \
    }                                                              \
    (lhs) = std::move(*allot_try_result);                          \
  } while (false)

// Declares `decl` (e.g. `const Page page`) holding the value of a Result, or returns early with
// its error. `decl` is a declaration and `result` a name, so neither can take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ALLOT_TRY_LET(decl, expr) \
  ALLOT_TRY_LET_IMPL(ALLOT_TRY_CONCAT(allot_try_let_, __LINE__), decl, expr)
#define ALLOT_TRY_LET_IMPL(result, decl, expr)         \
  auto result = (expr);                                \
  if (!result) {                                       \
    return std::unexpected(std::move(result).error()); \
  }                                                    \
  decl = std::move(*result)
// NOLINTEND(bugprone-macro-parentheses)
#define ALLOT_TRY_CONCAT(a, b) ALLOT_TRY_CONCAT_INNER(a, b)
#define ALLOT_TRY_CONCAT_INNER(a, b) a##b

// The routes of several lists, one list after another.
std::vector<Route> join_routes(std::initializer_list<std::span<const Route>> lists);
// Every route the API serves, in the order they are matched.
std::vector<Route> all_routes();
// Applies a PATCH of a tenant's billing mode and credit limit, when either is given.
[[nodiscard]] Status apply_billing_change(Call& call, const std::string& tenant_id,
                                          const std::optional<std::string>& billing,
                                          const std::optional<std::string>& credit_limit);

class App {
 public:
  App(Service& service, std::string version, Metrics& metrics, ApiOptions options = {});
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // The HttpHandler: answers health checks at once, everything else through the service.
  void handle(HttpRequest request, Responder respond);

  // What the service controller (daemon/service_controller.h) and the proxy share.
  ServiceTraffic& traffic() { return traffic_; }
  // One round of services' readiness probes; run on the network thread (HttpServer::repeat).
  boost::asio::awaitable<void> probe_services();

 private:
  // Answers the request; sets `route` to the pattern (or name) it was routed by.
  void route_and_answer(HttpRequest request, std::string& route, Responder respond);

  // Records an audit entry in the next batch.
  void audit_later(AuditEntry entry);

  // Answers a request for a published port (/i/INSTANCE/PORT/...) on a read thread.
  void answer_port(HttpRequest request, Responder respond);
  HttpResponse port_answer(const HttpRequest& request);
  // The same for a service's endpoint (/s/SERVICE/...).
  void answer_service(HttpRequest request, Responder respond);
  HttpResponse service_answer(const HttpRequest& request);

  // Answers a route's view handler on a read thread.
  void read(const Route& route, HttpRequest request, Target target, std::vector<std::string> params,
            Responder respond);

  Service& service_;
  std::string version_;
  Metrics& metrics_;
  ApiOptions options_;
  std::vector<Route> routes_;
  std::unique_ptr<TunnelHub> tunnels_;
  ServiceTraffic traffic_;
  // Last: its threads are joined, answering what is queued, before the rest goes.
  ReadPool reads_;
};

}  // namespace allot
