#include "api/port_proxy.h"

#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "api/answer_head.h"
#include "api/port_access.h"
#include "api/reply.h"
#include "client/frames.h"
#include "client/stream.h"

namespace allot {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// How long an instance may take to start its answer, and to take or give each piece of a body.
constexpr auto kAnswerTimeout = std::chrono::seconds(300);
constexpr auto kClientTimeout = std::chrono::seconds(60);
// Documents served from an instance's port run as an origin of their own (no script of theirs
// reaches allotd's dashboard, its storage or its cookies, which share the host name).
constexpr std::string_view kSandbox =
    "sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals "
    "allow-downloads";

// The client's Cookie header without allotd's own link cookie; empty when nothing is left.
std::string cookies_but_link(std::string_view header) {
  const std::string link = std::string(kLinkCookie) + "=";
  std::string out;
  for (std::string_view pair : cookie_pairs(header)) {
    if (pair.starts_with(link)) continue;
    if (!out.empty()) out += "; ";
    out += pair;
  }
  return out;
}

// The request as the instance gets it: allotd's credentials and the hop's own headers left out.
http::request<http::string_body> outgoing(const ProxiedRequest& in,
                                          const http::request<http::string_body>& header,
                                          bool upgrade) {
  http::request<http::string_body> out{header.method(), in.target, 11};
  for (const auto& field : header) {
    switch (field.name()) {
      case http::field::authorization:
      case http::field::cookie:
      case http::field::connection:
      case http::field::keep_alive:
      case http::field::proxy_connection:
      case http::field::te:
      case http::field::trailer:
      case http::field::transfer_encoding:
      case http::field::upgrade:
      case http::field::content_length:
        break;
      default:
        out.insert(field.name_string(), field.value());
    }
  }
  const auto cookie = header[http::field::cookie];
  if (auto cookies = cookies_but_link({cookie.data(), cookie.size()}); !cookies.empty()) {
    out.set(http::field::cookie, cookies);
  }
  if (upgrade) {
    out.set(http::field::connection, "Upgrade");
    out.set(http::field::upgrade, header[http::field::upgrade]);
  }
  out.set("X-Forwarded-For", in.remote);
  out.set("X-Forwarded-Proto", "http");
  out.set("X-Forwarded-Prefix", in.prefix);
  out.body() = in.body;
  out.prepare_payload();
  return out;
}

awaitable<bool> refuse(Exchange& exchange, const Error& error) {
  HttpResponse answer = error_reply(error);
  co_await exchange.answer(std::move(answer));
  co_return exchange.keep_alive;
}

// Reads until the answer's header section is in the lease's buffer, its bare LFs made CRLF
// (api/answer_head.h). One that does not end within kMaxAnswerHeadBytes is left to the parser.
awaitable<void> read_head(TunnelLease& lease, boost::system::error_code& ec) {
  beast::flat_buffer& buffer = lease.pending();
  while (buffer.size() < kMaxAnswerHeadBytes) {
    const std::string_view seen(static_cast<const char*>(buffer.data().data()), buffer.size());
    if (const auto end = answer_head_end(seen)) {
      const std::string head = with_crlf(seen.substr(0, *end));
      if (head.size() == *end) co_return;
      const std::string whole = head + std::string(seen.substr(*end));
      buffer.consume(buffer.size());
      buffer.commit(asio::buffer_copy(buffer.prepare(whole.size()), asio::buffer(whole)));
      co_return;
    }
    const size_t n = co_await lease.conn().async_read_some(buffer.prepare(4096),
                                                           asio::redirect_error(use_awaitable, ec));
    if (ec) co_return;
    buffer.commit(n);
  }
}

// Streams the body of `parser`'s message from `lease` to the client as it comes: each read
// returns what has arrived, so that an event stream's events pass one by one.
awaitable<void> relay_body(TunnelLease& lease, http::response_parser<http::buffer_body>& parser,
                           http::serializer<false, http::buffer_body>& serializer,
                           Exchange& exchange, AnswerTap* tap, boost::system::error_code& ec) {
  std::vector<char> chunk(65536);
  auto& message = parser.get();
  while (!ec) {
    if (!parser.is_done()) {
      message.body().data = chunk.data();
      message.body().size = chunk.size();
      lease.conn().expires_after(kAnswerTimeout);
      co_await http::async_read_some(lease.conn(), lease.pending(), parser,
                                     asio::redirect_error(use_awaitable, ec));
      if (ec == http::error::need_buffer) ec = {};
      if (ec) break;
      message.body().size = chunk.size() - message.body().size;
      message.body().data = chunk.data();
      if (tap != nullptr) tap->see({chunk.data(), message.body().size});
      message.body().more = !parser.is_done();
    } else {
      message.body().data = nullptr;
      message.body().size = 0;
    }
    exchange.stream.expires_after(kClientTimeout);
    co_await http::async_write(exchange.stream, serializer,
                               asio::redirect_error(use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    if (serializer.is_done()) break;
  }
  lease.conn().expires_never();
  exchange.stream.expires_never();
}

}  // namespace

awaitable<bool> proxy_http(TunnelHub& hub, ProxiedRequest request, Exchange& exchange,
                           std::optional<Error>* unreached) {
  const bool upgrade = beast::websocket::is_upgrade(exchange.request) ||
                       exchange.request.count(http::field::upgrade) > 0;
  http::request<http::string_body> out = outgoing(request, exchange.request, upgrade);
  // A metered answer's usage is read as it passes: the replica is asked for it uncompressed,
  // whatever the caller accepts (a compressed one would hide its tokens).
  if (request.tap != nullptr) out.set(http::field::accept_encoding, "identity");
  const std::string key =
      fmt::format("{}/{}/{}", request.node_id, request.instance_id, request.port);
  TunnelLease lease;
  std::optional<http::response_parser<http::buffer_body>> parser;
  boost::system::error_code ec;
  // A kept stream may have been closed by the instance since: one more try on a new stream.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<TunnelLease> kept = attempt == 0 && !upgrade ? hub.take_idle(key) : std::nullopt;
    const bool reused = kept.has_value();
    if (kept) {
      lease = std::move(*kept);
    } else {
      nlohmann::json where = {
          {"instance", request.instance_id}, {"port", request.port}, {"tls", request.tls}};
      auto opened = co_await hub.open(request.node_id, std::move(where));
      if (!opened && unreached != nullptr) {
        *unreached = opened.error();
        co_return exchange.keep_alive;
      }
      if (!opened) co_return co_await refuse(exchange, opened.error());
      lease = std::move(*opened);
    }
    parser.emplace();
    // No limit: the largest number, since Boost 1.74 takes boost::none for a limit of nothing.
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (out.method() == http::verb::head) parser->skip(true);
    ec = {};
    lease.conn().expires_after(kAnswerTimeout);
    co_await http::async_write(lease.conn(), out, asio::redirect_error(use_awaitable, ec));
    if (!ec) co_await read_head(lease, ec);
    if (!ec) {
      co_await http::async_read_header(lease.conn(), lease.pending(), *parser,
                                       asio::redirect_error(use_awaitable, ec));
    }
    lease.conn().expires_never();
    if (!ec) break;
    if (!reused) {
      // Named, not a temporary of the co_await: GCC 12 destroys those twice.
      const Error silent{ErrorCode::kBadGateway,
                         fmt::format("port {} of instance {} did not answer: {}", request.port,
                                     request.instance_id, ec.message())};
      if (unreached != nullptr) {
        *unreached = silent;
        co_return exchange.keep_alive;
      }
      co_return co_await refuse(exchange, silent);
    }
  }
  auto& answer = parser->get();
  const bool switching = answer.result() == http::status::switching_protocols;
  answer.set("Content-Security-Policy", std::string(kSandbox));
  if (!request.set_cookie.empty()) answer.insert(http::field::set_cookie, request.set_cookie);
  if (!request.replica.empty()) answer.set("X-Allot-Replica", request.replica);
  if (request.tap != nullptr) {
    request.tap->status = static_cast<int>(answer.result_int());
    const auto tokens = answer.find(beast::string_view(kTokensHeader.data(), kTokensHeader.size()));
    request.tap->has_tokens_header = tokens != answer.end();
    if (tokens != answer.end()) request.tap->tokens_header = std::string(tokens->value());
    request.tap->content_type = std::string(answer[http::field::content_type]);
    request.tap->content_encoding = std::string(answer[http::field::content_encoding]);
  }
  const bool client_keeps = exchange.keep_alive && answer.keep_alive() && !answer.need_eof();
  if (!switching) answer.keep_alive(client_keeps);
  http::serializer<false, http::buffer_body> serializer{answer};
  exchange.stream.expires_after(kClientTimeout);
  co_await http::async_write_header(exchange.stream, serializer,
                                    asio::redirect_error(use_awaitable, ec));
  exchange.stream.expires_never();
  if (ec) co_return false;
  if (switching) {
    co_await net::splice(exchange.stream, exchange.buffer, lease.conn(), lease.pending());
    co_return false;
  }
  co_await relay_body(lease, *parser, serializer, exchange, request.tap, ec);
  if (ec) co_return false;
  if (parser->is_done() && parser->keep_alive() && lease.pending().size() == 0) {
    hub.keep_idle(key, std::move(lease));
  }
  co_return client_keeps;
}

awaitable<bool> forward_tcp(TunnelHub& hub, std::string node_id, std::string instance_id, int port,
                            Exchange& exchange) {
  nlohmann::json where = {{"instance", instance_id}, {"port", port}};
  auto opened = co_await hub.open(node_id, std::move(where));
  if (!opened) co_return co_await refuse(exchange, opened.error());
  TunnelLease lease = std::move(*opened);
  boost::system::error_code ec;
  co_await switch_protocols(exchange, kStreamProtocol, ec);
  if (ec) co_return false;
  co_await net::splice(exchange.stream, exchange.buffer, lease.conn(), lease.pending());
  co_return false;
}

awaitable<bool> relay_exec(TunnelHub& hub, std::string node_id, nlohmann::json what,
                           Exchange& exchange, std::function<void(int, std::string)> audit) {
  auto opened = co_await hub.open(node_id, std::move(what));
  if (!opened) {
    audit(http_status(opened.error().code), std::string(code_name(opened.error().code)));
    co_return co_await refuse(exchange, opened.error());
  }
  TunnelLease lease = std::move(*opened);
  boost::system::error_code ec;
  co_await switch_protocols(exchange, kExecProtocol, ec);
  if (ec) {
    audit(-1, "disconnected");
    co_return false;
  }
  // The watcher lives in this frame and the callback holds only a reference: GCC 12 destroys a
  // temporary of a co_await twice, which freed a shared_ptr's watcher under the relay (ASan).
  net::ExitWatcher watcher;
  std::function<void(std::string_view)> see = [&watcher](std::string_view bytes) {
    watcher.see(bytes);
  };
  co_await net::splice(exchange.stream, exchange.buffer, lease.conn(), lease.pending(), see);
  audit(watcher.exit_code().value_or(-1), watcher.exit_code() ? "" : "disconnected");
  co_return false;
}

namespace {

// The node's bytes into WebSocket messages, until the node's side ends; then the WebSocket is
// closed.
awaitable<void> node_to_browser(TunnelLease& lease,
                                beast::websocket::stream<beast::tcp_stream&>& ws,
                                net::ExitWatcher& watcher) {
  boost::system::error_code ec;
  if (lease.pending().size() > 0) {
    const std::string first(static_cast<const char*>(lease.pending().data().data()),
                            lease.pending().size());
    lease.pending().consume(first.size());
    watcher.see(first);
    co_await ws.async_write(asio::buffer(first), asio::redirect_error(use_awaitable, ec));
  }
  std::vector<char> chunk(size_t{64} * 1024);
  while (!ec) {
    const size_t n = co_await lease.conn().async_read_some(asio::buffer(chunk),
                                                           asio::redirect_error(use_awaitable, ec));
    if (n == 0) continue;
    watcher.see({chunk.data(), n});
    boost::system::error_code write_ec;
    co_await ws.async_write(asio::buffer(chunk.data(), n),
                            asio::redirect_error(use_awaitable, write_ec));
    if (write_ec) break;
  }
  boost::system::error_code ignored;
  co_await ws.async_close(beast::websocket::close_code::normal,
                          asio::redirect_error(use_awaitable, ignored));
}

}  // namespace

awaitable<bool> relay_browser_exec(TunnelHub& hub, std::string node_id, nlohmann::json what,
                                   Exchange& exchange,
                                   std::function<void(int, std::string)> audit) {
  auto opened = co_await hub.open(node_id, std::move(what));
  if (!opened) {
    audit(http_status(opened.error().code), std::string(code_name(opened.error().code)));
    co_return co_await refuse(exchange, opened.error());
  }
  TunnelLease lease = std::move(*opened);
  beast::websocket::stream<beast::tcp_stream&> ws(exchange.stream);
  ws.binary(true);
  ws.read_message_max(net::kMaxFramePayload + net::kFrameHeader);
  boost::system::error_code ec;
  co_await ws.async_accept(exchange.request, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    audit(-1, "disconnected");
    co_return false;
  }
  auto watcher = std::make_shared<net::ExitWatcher>();
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer ended(executor, asio::steady_timer::time_point::max());
  bool node_ended = false;
  asio::co_spawn(executor, node_to_browser(lease, ws, *watcher), [&](const std::exception_ptr&) {
    node_ended = true;
    ended.cancel();
  });
  // The browser's messages into the node, until the browser or the node ends the session.
  beast::flat_buffer message;
  while (!node_ended) {
    co_await ws.async_read(message, asio::redirect_error(use_awaitable, ec));
    if (ec) break;
    boost::system::error_code write_ec;
    co_await asio::async_write(lease.conn(), message.data(),
                               asio::redirect_error(use_awaitable, write_ec));
    message.consume(message.size());
    if (write_ec) break;
  }
  boost::system::error_code ignored;
  lease.conn().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  while (!node_ended) co_await ended.async_wait(asio::redirect_error(use_awaitable, ignored));
  audit(watcher->exit_code().value_or(-1), watcher->exit_code() ? "" : "disconnected");
  co_return false;
}

}  // namespace allot

namespace allot {

awaitable<Result<int>> probe_http(TunnelHub& hub, std::string node_id, std::string instance_id,
                                  int port, std::string path, int64_t timeout_ms) {
  nlohmann::json where = {{"instance", instance_id}, {"port", port}, {"tls", false}};
  auto opened = co_await hub.open(node_id, std::move(where));
  if (!opened) co_return std::unexpected(opened.error());
  TunnelLease lease = std::move(*opened);
  http::request<http::empty_body> ask{http::verb::get, path, 11};
  ask.set(http::field::host, "localhost");
  ask.set(http::field::user_agent, "allotd-probe");
  ask.keep_alive(false);
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  boost::system::error_code ec;
  lease.conn().expires_after(std::chrono::milliseconds(timeout_ms));
  co_await http::async_write(lease.conn(), ask, asio::redirect_error(use_awaitable, ec));
  if (!ec) co_await read_head(lease, ec);
  if (!ec) {
    co_await http::async_read_header(lease.conn(), lease.pending(), parser,
                                     asio::redirect_error(use_awaitable, ec));
  }
  lease.conn().expires_never();
  if (ec) {
    co_return fail(ErrorCode::kBadGateway,
                   fmt::format("GET {} did not answer: {}", path, ec.message()));
  }
  co_return static_cast<int>(parser.get().result_int());
}

}  // namespace allot
