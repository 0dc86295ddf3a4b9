// allotd's end of the nodes' tunnels (docs/api.md, "Tunnels"). Nothing on a node takes inbound
// connections: each agent keeps one control connection open to allotd, and when allotd needs a
// byte stream to a port of an instance on that node (a published port, a port-forward, an exec),
// it says so on the control connection and the agent dials back a new connection for it, which
// allotd pairs with the waiting request. Every connection stays owned by the HTTP server's relay
// that accepted it, so that a stop closes them all. Used on the server's network thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/exchange.h"
#include "common/error.h"

namespace allot {

// The protocols of the upgrades: an agent's control connection, and any byte stream.
inline constexpr std::string_view kTunnelProtocol = "allot-tunnel";
inline constexpr std::string_view kStreamProtocol = "allot-stream";
// A client's exec or shell session (client/frames.h).
inline constexpr std::string_view kExecProtocol = "allot-exec";

// A stream an agent dialled back, held by whoever asked for it; its connection ends when the last
// holder lets go.
class TunnelLease {
 public:
  struct Held;
  TunnelLease() = default;
  explicit TunnelLease(std::shared_ptr<Held> held) : held_(std::move(held)) {}
  TunnelLease(TunnelLease&&) noexcept = default;
  TunnelLease& operator=(TunnelLease&& other) noexcept;
  TunnelLease(const TunnelLease&) = delete;
  TunnelLease& operator=(const TunnelLease&) = delete;
  ~TunnelLease();

  boost::beast::tcp_stream& conn();
  boost::beast::flat_buffer& pending();
  explicit operator bool() const { return held_ != nullptr; }

 private:
  std::shared_ptr<Held> held_;
};

class TunnelHub {
 public:
  // The relay of an agent's control connection: answers 101 and keeps the connection until it
  // closes, the server stops, or the node opens another.
  boost::asio::awaitable<bool> serve_control(std::string node_id, Exchange& exchange);
  // The relay of a connection an agent dialled back for `stream_id`: answers 101 and hands it to
  // the open() that waits for it, or, when `refusal` is set (the agent could not reach the port),
  // hands that on as a kBadGateway. 404 for a stream no one on that node waits for.
  boost::asio::awaitable<bool> serve_dial_back(std::string node_id, std::string stream_id,
                                               std::string refusal, Exchange& exchange);
  // A new stream through `node_id`'s agent; `what` tells the agent where to ("instance", "port",
  // and, for an exec, "exec"). kBadGateway when the node has no tunnel or does not answer in time.
  boost::asio::awaitable<Result<TunnelLease>> open(std::string node_id, nlohmann::json what);

  // Streams kept for the next HTTP request to the same port, like any proxy's kept-alive
  // connections to its backends.
  std::optional<TunnelLease> take_idle(const std::string& key);
  void keep_idle(const std::string& key, TunnelLease lease);

  bool connected(const std::string& node_id) const { return controls_.contains(node_id); }

 private:
  struct Control;
  struct Pending;

  static boost::asio::awaitable<void> watch_close(std::shared_ptr<Control> control,
                                                  boost::beast::tcp_stream& stream);

  std::map<std::string, std::shared_ptr<Control>> controls_;  // By node.
  std::map<std::string, std::shared_ptr<Pending>> pending_;   // By stream id.
  std::map<std::string, std::vector<TunnelLease>> idle_;
  uint64_t next_stream_ = 0;
};

}  // namespace allot
