// Plain HTTP request and response values, so that only http_server.cc sees Beast.
#pragma once

#include <functional>
#include <string>

namespace allot {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // Path and query, e.g. "/v1/projects?limit=10".
  std::string authorization;
  std::string body;
  std::string remote;  // The peer's address, for logs.
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::string cache_control;  // Left out when empty.
  // The caller proved a credential (a user's key, a node's credential or a join token): the
  // server then keeps its connection out of those it closes to make room under load.
  bool authenticated = false;
};

// Answers a request. May be called from any thread, exactly once.
using Responder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, Responder)>;

}  // namespace allot
