// The HTTP/1.1 server: one network thread, keep-alive, a body limit, and a graceful stop that
// finishes requests in flight before run() returns. Malformed requests are answered (400, 408,
// 413, 414, 431, 505) with a JSON error and the connection closed; slow clients are bounded by
// header, body and idle deadlines and by per-address and total connection caps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http.h"
#include "common/error.h"
#include "common/limits.h"

namespace allot {

struct HttpServerOptions {
  int64_t header_timeout_ms = limits::kDefaultHeaderTimeoutMs;
  int64_t body_timeout_ms = limits::kDefaultBodyTimeoutMs;
  int64_t idle_timeout_ms = limits::kDefaultIdleTimeoutMs;
  // Open connections in all. At the cap, the connection that has waited longest for its request
  // is closed for the new one, unless every open connection is authenticated or busy: then the
  // new one is refused.
  int64_t max_connections = limits::kDefaultMaxConnections;
  // Connections from one address; one more is closed at once.
  int64_t max_connections_per_address = limits::kDefaultMaxConnectionsPerAddress;
};

class HttpServer {
 public:
  // Binds host:port (port 0 picks a free one) and starts accepting when run() is called.
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> bind(const std::string& host,
                                                                uint16_t port, HttpHandler handler,
                                                                HttpServerOptions options = {});
  virtual ~HttpServer() = default;

  // The bound port.
  virtual uint16_t port() const = 0;

  // Serves until stop(); returns once every accepted request has been answered.
  virtual void run() = 0;

  // Runs `task` on the network thread, again `interval_ms` after each run ends, until stop():
  // work of the server's own that uses what only that thread may (api/tunnel_hub.h). Safe from
  // any thread.
  virtual void repeat(int64_t interval_ms, std::function<boost::asio::awaitable<void>()> task) = 0;

  // Stops accepting, closes idle connections and lets run() return when in-flight requests are
  // answered. Safe from any thread, and more than once.
  virtual void stop() = 0;
};

}  // namespace allot
