// The API: routes requests to handlers, authenticates them, runs them on the core thread through
// the Service, and writes an audit entry for every mutating call.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.h"
#include "api/http.h"
#include "api/request.h"
#include "api/service.h"

namespace allot {

// Everything a handler gets.
struct Call {
  const HttpRequest& request;
  const Target& target;
  Context& ctx;
  Caller caller;
  std::vector<std::string> params;  // The path's {placeholders}, in order.
  std::string target_id;            // Set by handlers that create something, for the audit log.
};

using RouteHandler = Result<HttpResponse> (*)(Call&);

struct Route {
  std::string_view method;
  std::string_view pattern;  // e.g. "/v1/projects/{id}"
  RouteHandler handler;
};

// Returns early from a function returning Result<...> when a Status-returning call fails.
#define ALLOT_TRY(expr)                                          \
  if (auto allot_try_status = (expr); !allot_try_status) {       \
    return std::unexpected(std::move(allot_try_status).error()); \
  }

std::span<const Route> identity_routes();

class App {
 public:
  App(Service& service, std::string version);

  // The HttpHandler: answers health checks at once, everything else through the service.
  void handle(HttpRequest request, Responder respond);

 private:
  Service& service_;
  std::string version_;
  std::vector<Route> routes_;
};

}  // namespace allot
