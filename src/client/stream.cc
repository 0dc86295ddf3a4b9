#include "client/stream.h"

#include <chrono>
#include <exception>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace allot::net {
namespace {

namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr size_t kMaxAnswerBytes = 1 << 20;

// The message of an error answer's JSON body, or the body itself.
std::string answer_message(int status, const std::string& body) {
  const auto document = nlohmann::json::parse(body, nullptr, false);
  if (document.is_object() && document.contains("error") && document["error"].is_object()) {
    return fmt::format("{} {}", status, document["error"].value("message", ""));
  }
  return fmt::format("{} {}", status, body.substr(0, 200));
}

// Whether `ec` is the end of what a peer sends: a TCP end, or a TLS one with or without its
// close_notify.
bool ended(const boost::system::error_code& ec) {
  return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

// One direction: `pending` first, then whatever `from` sends, into `to`, until `from` ends. Its
// end is passed on as a half-close of `to`'s TCP connection; a connection that broke closes both
// ways.
template <class From, class To>
awaitable<void> pump(From& from, To& to, beast::flat_buffer& pending,
                     std::function<void(std::string_view)> watch) {
  boost::system::error_code ec;
  if (pending.size() > 0) {
    if (watch) watch({static_cast<const char*>(pending.data().data()), pending.size()});
    co_await asio::async_write(to, pending.data(), asio::redirect_error(use_awaitable, ec));
    pending.consume(pending.size());
  }
  std::vector<char> chunk(65536);
  while (!ec) {
    const size_t n =
        co_await from.async_read_some(asio::buffer(chunk), asio::redirect_error(use_awaitable, ec));
    if (n == 0) continue;
    if (watch) watch({chunk.data(), n});
    boost::system::error_code write_ec;
    co_await asio::async_write(to, asio::buffer(chunk.data(), n),
                               asio::redirect_error(use_awaitable, write_ec));
    if (write_ec) ec = write_ec;
  }
  boost::system::error_code ignored;
  tcp::socket& to_socket = beast::get_lowest_layer(to).socket();
  if (ended(ec)) {
    to_socket.shutdown(tcp::socket::shutdown_send, ignored);
  } else {
    beast::get_lowest_layer(from).socket().shutdown(tcp::socket::shutdown_both, ignored);
    to_socket.shutdown(tcp::socket::shutdown_both, ignored);
  }
}

// Runs `back` beside `there` until both have ended.
awaitable<void> both_ways(awaitable<void> there, awaitable<void> back) {
  auto executor = co_await asio::this_coro::executor;
  // The timer is how `back` says it has ended.
  asio::steady_timer done(executor, asio::steady_timer::time_point::max());
  bool back_ended = false;
  asio::co_spawn(executor, std::move(back), [&](const std::exception_ptr&) {
    back_ended = true;
    done.cancel();
  });
  co_await std::move(there);
  boost::system::error_code ec;
  while (!back_ended) {
    co_await done.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace

ErrorCode code_for_status(int status) {
  switch (status) {
    case 400:
      return ErrorCode::kInvalidArgument;
    case 401:
      return ErrorCode::kUnauthenticated;
    case 403:
      return ErrorCode::kForbidden;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 502:
      return ErrorCode::kBadGateway;
    default:
      return ErrorCode::kUnavailable;
  }
}

Result<Endpoint> parse_base_url(const std::string& base_url) {
  constexpr std::string_view kScheme = "http://";
  if (!base_url.starts_with(kScheme)) {
    return fail(ErrorCode::kInvalidArgument, "the server must be http://HOST:PORT");
  }
  std::string rest = base_url.substr(kScheme.size());
  while (rest.ends_with('/')) rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size() ||
      rest.find('/') != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "the server must be http://HOST:PORT");
  }
  std::string host = rest.substr(0, colon);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  return Endpoint{.host = host, .port = rest.substr(colon + 1)};
}

awaitable<Result<Stream>> open_upgraded(Endpoint server, std::string target,
                                        std::string authorization, std::string protocol) {
  auto executor = co_await asio::this_coro::executor;
  boost::system::error_code ec;
  tcp::resolver resolver(executor);
  const auto found = co_await resolver.async_resolve(server.host, server.port,
                                                     asio::redirect_error(use_awaitable, ec));
  if (ec) {
    co_return fail(ErrorCode::kUnavailable,
                   fmt::format("cannot resolve {}: {}", server.host, ec.message()));
  }
  Stream stream{.conn = beast::tcp_stream(executor), .pending = {}};
  stream.conn.expires_after(kConnectTimeout);
  co_await stream.conn.async_connect(found, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    co_return fail(ErrorCode::kUnavailable,
                   fmt::format("cannot reach {}:{}: {}", server.host, server.port, ec.message()));
  }
  stream.conn.socket().set_option(tcp::no_delay(true), ec);
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, server.host);
  request.set(http::field::user_agent, "allot");
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
  request.set(http::field::connection, "Upgrade");
  request.set(http::field::upgrade, protocol);
  co_await http::async_write(stream.conn, request, asio::redirect_error(use_awaitable, ec));
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  if (!ec) {
    co_await http::async_read_header(stream.conn, stream.pending, parser,
                                     asio::redirect_error(use_awaitable, ec));
  }
  if (ec) {
    co_return fail(ErrorCode::kUnavailable,
                   fmt::format("{}:{} broke off: {}", server.host, server.port, ec.message()));
  }
  const int status = static_cast<int>(parser.get().result_int());
  if (status == 101) {
    stream.conn.expires_never();
    co_return stream;
  }
  co_await http::async_read(stream.conn, stream.pending, parser,
                            asio::redirect_error(use_awaitable, ec));
  co_return fail(code_for_status(status), answer_message(status, parser.get().body()));
}

awaitable<void> splice(beast::tcp_stream& a, beast::flat_buffer& a_pending, beast::tcp_stream& b,
                       beast::flat_buffer& b_pending,
                       std::function<void(std::string_view)> watch_b) {
  awaitable<void> there = pump(a, b, a_pending, {});
  awaitable<void> back = pump(b, a, b_pending, std::move(watch_b));
  co_await both_ways(std::move(there), std::move(back));
}

awaitable<void> splice(beast::tcp_stream& a, beast::flat_buffer& a_pending, TlsStream& b) {
  beast::flat_buffer nothing;
  awaitable<void> there = pump(a, b, a_pending, {});
  awaitable<void> back = pump(b, a, nothing, {});
  co_await both_ways(std::move(there), std::move(back));
}

FrameWriter::FrameWriter(Stream& stream)
    : stream_(stream), idle_(stream.conn.get_executor(), asio::steady_timer::time_point::max()) {}

awaitable<void> FrameWriter::send(FrameKind kind, std::string_view payload) {
  std::string frame = encode_frame(kind, payload);
  boost::system::error_code ec;
  while (busy_) co_await idle_.async_wait(asio::redirect_error(use_awaitable, ec));
  if (broken_) co_return;
  busy_ = true;
  co_await asio::async_write(stream_.conn, asio::buffer(frame),
                             asio::redirect_error(use_awaitable, ec));
  if (ec) broken_ = true;
  busy_ = false;
  idle_.cancel();
}

}  // namespace allot::net
