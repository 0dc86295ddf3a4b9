// A small blocking HTTP/1.1 client for the CLI and the tests. It keeps one connection alive and
// reconnects when the server has closed it.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/error.h"

namespace allot {

struct ClientResponse {
  int status = 0;
  std::string body;
};

class HttpClient {
 public:
  // `base_url` is "http://HOST:PORT"; fails with kInvalidArgument on anything else. A request
  // that takes longer than `timeout` (writing it and reading the whole answer) fails with
  // kUnavailable and its connection is dropped; connecting may take 10 s.
  [[nodiscard]] static Result<std::unique_ptr<HttpClient>> connect_to(
      const std::string& base_url, std::chrono::milliseconds timeout = kDefaultTimeout);
  static constexpr std::chrono::milliseconds kDefaultTimeout{120'000};
  virtual ~HttpClient() = default;

  // Sends one request. `key`, when not empty, goes as a Bearer token. Fails with kUnavailable
  // when the server cannot be reached or the connection breaks.
  [[nodiscard]] virtual Result<ClientResponse> send(const std::string& method,
                                                    const std::string& target,
                                                    const std::string& body,
                                                    const std::string& key) = 0;
  // Sends with a raw Authorization header value (tests use it to send malformed ones).
  [[nodiscard]] virtual Result<ClientResponse> send_raw(const std::string& method,
                                                        const std::string& target,
                                                        const std::string& body,
                                                        const std::string& authorization) = 0;
};

}  // namespace allot
