// The HTTP/1.1 server: one network thread, keep-alive, a body limit, and a graceful stop that
// finishes requests in flight before run() returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "api/http.h"
#include "common/error.h"

namespace allot {

class HttpServer {
 public:
  // Binds host:port (port 0 picks a free one) and starts accepting when run() is called.
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> bind(const std::string& host,
                                                                uint16_t port, HttpHandler handler);
  virtual ~HttpServer() = default;

  // The bound port.
  virtual uint16_t port() const = 0;

  // Serves until stop(); returns once every accepted request has been answered.
  virtual void run() = 0;

  // Stops accepting, closes idle connections and lets run() return when in-flight requests are
  // answered. Safe from any thread, and more than once.
  virtual void stop() = 0;
};

}  // namespace allot
