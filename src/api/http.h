// Plain HTTP request and response values, so that the routes need not see Beast.
#pragma once

#include <functional>
#include <string>
#include <utility>  // Boost 1.74's Asio uses std::exchange without it.
#include <vector>

#include <boost/asio/awaitable.hpp>

namespace allot {

// The client's connection, handed to a relay (api/exchange.h).
struct Exchange;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // Path and query, e.g. "/v1/projects?limit=10".
  std::string authorization;
  std::string cookie;  // The Cookie header, for the links of published ports (api/port_access.h).
  std::string body;
  std::string remote;           // The peer's address, for logs.
  std::string idempotency_key;  // The Idempotency-Key header (POST /v1/instances reads it).
  std::string origin;  // The Origin header, which browsers send with cross-origin requests.
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::string cache_control;  // Left out when empty.
  std::string location;       // For redirects; left out when empty.
  // More header fields, written as they stand (the cross-origin ones of api/cors.h).
  std::vector<std::pair<std::string, std::string>> headers;
  // An answer to a request whose Idempotency-Key an earlier one used: it repeats what that one
  // made (Idempotent-Replayed: true).
  bool replayed = false;
  // The caller proved a credential (a user's key, a node's credential or a join token): the
  // server then keeps its connection out of those it closes to make room under load.
  bool authenticated = false;
  // Set for an answer that is not written as it stands: the server hands the connection to it, on
  // its network thread, and it answers the client itself (a proxied request, an upgrade to a byte
  // stream). It returns whether the connection may go on to its next request.
  std::function<boost::asio::awaitable<bool>(Exchange&)> relay;
};

// Answers a request. May be called from any thread, exactly once.
using Responder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, Responder)>;

}  // namespace allot
