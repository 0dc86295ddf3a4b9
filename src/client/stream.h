// Byte streams through allotd (docs/api.md, "Tunnels"): an HTTP/1.1 upgrade that turns a
// connection into a plain byte stream, and the splice that joins two such streams. The agent's
// tunnel, allotd's proxy and the CLI's port-forward and exec all use them.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <boost/asio/ssl/stream.hpp>

#include "client/frames.h"
#include "common/asio.h"
#include "common/error.h"

namespace allot::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

// A connection and the bytes already read from it that nobody has used yet.
struct Stream {
  beast::tcp_stream conn;
  beast::flat_buffer pending;
};

// Where allotd listens, from "http://HOST:PORT"; kInvalidArgument for anything else.
struct Endpoint {
  std::string host;
  std::string port;
};
[[nodiscard]] Result<Endpoint> parse_base_url(const std::string& base_url);

// Connects to `server`, sends `GET target` asking to upgrade to `protocol` with `authorization`
// as the Authorization header, and returns the stream once 101 comes back. Any other answer is an
// error: its code follows the HTTP status (401 kUnauthenticated, 403 kForbidden, 404 kNotFound,
// 502 kBadGateway, 400 kInvalidArgument, else kUnavailable) and its message is the answer's.
[[nodiscard]] asio::awaitable<Result<Stream>> open_upgraded(Endpoint server, std::string target,
                                                            std::string authorization,
                                                            std::string protocol);

// Copies bytes both ways, `a`'s pending bytes first to `b` and `b`'s to `a`, until both sides
// have ended; the end of one side's sending is passed on to the other as a half-close.
// `watch_b`, when set, sees every byte that goes from `b` to `a`, in order.
asio::awaitable<void> splice(beast::tcp_stream& a, beast::flat_buffer& a_pending,
                             beast::tcp_stream& b, beast::flat_buffer& b_pending,
                             std::function<void(std::string_view)> watch_b = {});

// A TLS connection over TCP, as the agent holds one to an instance's https port.
using TlsStream = asio::ssl::stream<beast::tcp_stream>;

// The same, with `b` a TLS connection: its end, with or without a close_notify, is passed on as
// a half-close of `a`; `a`'s end closes `b`'s TCP connection for sending.
asio::awaitable<void> splice(beast::tcp_stream& a, beast::flat_buffer& a_pending, TlsStream& b);

// Writes whole frames (client/frames.h) to a stream, one writer at a time, from coroutines of
// one thread.
class FrameWriter {
 public:
  explicit FrameWriter(Stream& stream);
  // Returns once the frame is written, or the stream has broken (broken() then).
  asio::awaitable<void> send(FrameKind kind, std::string_view payload);
  bool broken() const { return broken_; }

 private:
  Stream& stream_;
  asio::steady_timer idle_;
  bool busy_ = false;
  bool broken_ = false;
};

// The code an HTTP status stands for, as open_upgraded gives it.
ErrorCode code_for_status(int status);

}  // namespace allot::net
