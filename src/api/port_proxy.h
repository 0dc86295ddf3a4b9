// The relays behind published ports and port-forwards: an HTTP request (or a WebSocket, which is
// an HTTP request that upgrades) passed to an instance's port through its node's tunnel and the
// answer streamed back; and a plain TCP connection spliced to a port.
#pragma once

#include <optional>
#include <string>

#include "api/answer_usage.h"
#include "api/exchange.h"
#include "api/tunnel_hub.h"

namespace allot {

struct ProxiedRequest {
  std::string node_id;
  std::string instance_id;
  int port = 0;
  bool tls = false;    // An https port: the node's agent speaks TLS to it.
  std::string target;  // What the instance sees: the path under /i/INSTANCE/PORT, and the query.
  std::string body;
  std::string prefix;      // "/i/INSTANCE/PORT", sent as X-Forwarded-Prefix.
  std::string set_cookie;  // A Set-Cookie header to add to the answer; empty: none.
  std::string remote;      // The client's address, sent as X-Forwarded-For.
  std::string replica;  // Sent back as X-Allot-Replica when set: the service replica that answered.
  AnswerTap* tap = nullptr;  // When set, told the answer's status, headers and body as they pass.
};

// Answers the client with the instance's answer: a 502 (bad_gateway) when the port cannot be
// reached. Returns whether the client's connection may carry another request. With `unreached`,
// a port that cannot be reached is not answered: *unreached says why, and nothing has been sent
// to the client, so that the request may go to another replica.
boost::asio::awaitable<bool> proxy_http(TunnelHub& hub, ProxiedRequest request, Exchange& exchange,
                                        std::optional<Error>* unreached = nullptr);

// One GET of `path` on the port through its node's tunnel, as a readiness probe: the status, or
// why there was none within `timeout_ms`.
boost::asio::awaitable<Result<int>> probe_http(TunnelHub& hub, std::string node_id,
                                               std::string instance_id, int port, std::string path,
                                               int64_t timeout_ms);

// Answers 101 and splices the client's connection to the port until both sides end; a 502 when
// the port cannot be reached.
boost::asio::awaitable<bool> forward_tcp(TunnelHub& hub, std::string node_id,
                                         std::string instance_id, int port, Exchange& exchange);

// Answers 101 and carries an exec session's frames (client/frames.h) between the client and the
// node's agent. `audit` is told the status and error code of why it could not start, or at its
// end the command's exit code (-1, "disconnected", when it broke off before one came).
boost::asio::awaitable<bool> relay_exec(TunnelHub& hub, std::string node_id, nlohmann::json what,
                                        Exchange& exchange,
                                        std::function<void(int, std::string)> audit);

// The same for a browser: the session's frames ride in binary WebSocket messages, each message
// whole frames or parts of them, in order (the dashboard's shell).
boost::asio::awaitable<bool> relay_browser_exec(TunnelHub& hub, std::string node_id,
                                                nlohmann::json what, Exchange& exchange,
                                                std::function<void(int, std::string)> audit);

}  // namespace allot
