// A small blocking HTTP/1.1 client for the CLI, the agent and the tests. It keeps one connection
// alive and reconnects when the server has closed it. Given several servers (replicas of one
// controller, "http://a:8080,http://b:8080"), it uses the one that leads: it follows a follower's
// 307 to the leader, and while no replica answers, or one answers 503 (nothing was changed), it
// tries the others with backoff for up to a failover's length. A request that reached a server
// whose answer then never came is not sent again unless it is a GET or carries an idempotency key:
// it may have been applied.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/error.h"

namespace allot {

struct ClientResponse {
  int status = 0;
  std::string body;
  std::string location;  // The Location header of a redirect.
};

struct ClientRequest {
  std::string method;
  std::string target;
  std::string body;
  std::string authorization;  // The whole header value ("Bearer KEY"); none when empty.
  // Sent as Idempotency-Key: the server applies the request once however often it comes, so it
  // may be sent again after an answer was lost.
  std::string idempotency_key;
};

class HttpClient {
 public:
  // `base_urls` is "http://HOST:PORT", or several separated by commas; fails with
  // kInvalidArgument on anything else. A request that takes longer than `timeout` (writing it and
  // reading the whole answer) fails with kUnavailable and its connection is dropped; connecting
  // may take 10 s. With several servers, a request is retried across them for up to
  // `failover_wait`.
  [[nodiscard]] static Result<std::unique_ptr<HttpClient>> connect_to(
      const std::string& base_urls, std::chrono::milliseconds timeout = kDefaultTimeout,
      std::chrono::milliseconds failover_wait = kDefaultFailoverWait);
  static constexpr std::chrono::milliseconds kDefaultTimeout{120'000};
  static constexpr std::chrono::milliseconds kDefaultFailoverWait{30'000};
  virtual ~HttpClient() = default;

  // Sends one request. `key`, when not empty, goes as a Bearer token. Fails with kUnavailable
  // when the server cannot be reached or the connection breaks.
  [[nodiscard]] Result<ClientResponse> send(const std::string& method, const std::string& target,
                                            const std::string& body, const std::string& key) {
    return exchange(ClientRequest{.method = method,
                                  .target = target,
                                  .body = body,
                                  .authorization = key.empty() ? "" : "Bearer " + key});
  }
  [[nodiscard]] virtual Result<ClientResponse> exchange(const ClientRequest& request) = 0;
  // The server the last request went to, "http://HOST:PORT". Safe from any thread.
  [[nodiscard]] virtual std::string current_url() const = 0;
};

}  // namespace allot
