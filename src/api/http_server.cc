#include "api/http_server.h"

#include <array>
#include <chrono>
#include <list>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/exchange.h"
#include "api/http_parse.h"
#include "api/port_access.h"
#include "common/asio.h"
#include "common/limits.h"
#include "common/spawned.h"

namespace allot {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
using Parser = RequestParser;

// A deadline for a read that, unlike tcp_stream's own, leaves the socket open when it passes (the
// read ends with operation_aborted), so that the client can still be told 408.
class ReadDeadline {
 public:
  ReadDeadline(asio::io_context& io, tcp::socket& socket, int64_t timeout_ms)
      : timer_(io), state_(std::make_shared<State>(State{.socket = &socket})) {
    timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    // The handler may run after this object is gone; it touches the socket only while armed.
    timer_.async_wait([state = state_](const boost::system::error_code& ec) {
      if (ec || !state->armed) return;
      state->passed = true;
      boost::system::error_code ignored;
      state->socket->cancel(ignored);
    });
  }
  ~ReadDeadline() { state_->armed = false; }
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

  bool passed() const { return state_->passed; }

 private:
  struct State {
    tcp::socket* socket;
    bool armed = true;
    bool passed = false;
  };
  asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

// One open connection, as the server sees it.
struct Connection {
  beast::tcp_stream* stream;
  std::string address;
  bool reading = true;    // Waiting for a request: safe to close on stop.
  bool trusted = false;   // Has been answered as an authenticated caller: never closed for room.
  bool open = true;       // Counted in the server's totals.
  bool waiting = false;   // In the server's queue of connections waiting for a request.
  bool relaying = false;  // Handed to a relay (HttpResponse::relay): closed on stop.
  std::function<void()> on_stop;  // What the relay asked to be told of a stop.
  std::list<Connection*>::iterator place;
};

class BeastServer final : public HttpServer {
 public:
  BeastServer(HttpHandler handler, HttpServerOptions options)
      : acceptor_(io_), handler_(std::move(handler)), options_(options) {}

  Status listen(const std::string& host, uint16_t port) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) return fail(ErrorCode::kInvalidArgument, fmt::format("bad listen address {}", host));
    const tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return fail(ErrorCode::kUnavailable,
                  fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    return {};
  }

  uint16_t port() const override { return port_; }

  void run() override {
    asio::co_spawn(io_, accept_loop(), log_escape("the accept loop"));
    // What a spawned task lets escape is logged by its completion; this is the last wall, for a
    // plain handler's exception: the network thread goes on serving.
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("the network thread caught an exception: {}", e.what());
      }
    }
  }

  void repeat(int64_t interval_ms, std::function<awaitable<void>()> task) override {
    asio::post(io_, [this, interval_ms, task = std::move(task)]() mutable {
      if (!stopping_) {
        asio::co_spawn(io_, repeating(interval_ms, std::move(task)), log_escape("a repeated task"));
      }
    });
  }

  void stop() override {
    asio::post(io_, [this] {
      if (stopping_) return;
      stopping_ = true;
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (Connection* c : connections_) {
        if (c->reading || c->relaying) c->stream->socket().close(ec);
        if (c->relaying && c->on_stop) c->on_stop();
      }
    });
  }

 private:
  awaitable<void> repeating(int64_t interval_ms, std::function<awaitable<void>()> task) {
    asio::steady_timer pause(io_);
    while (!stopping_) {
      co_await task();
      pause.expires_after(std::chrono::milliseconds(interval_ms));
      boost::system::error_code ec;
      co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
    }
  }

  awaitable<void> accept_loop() {
    asio::steady_timer pause(io_);
    while (!stopping_) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, ec));
      if (stopping_) break;
      if (ec) {
        if (ec == asio::error::no_descriptors && !make_room()) {
          // Out of descriptors with nothing to shed: wait rather than spin on the error.
          pause.expires_after(std::chrono::milliseconds(100));
          co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
        }
        continue;
      }
      std::string address = socket.remote_endpoint(ec).address().to_string();
      if (ec) continue;
      // Dropping the socket closes it: over its address's share, or over the cap with no
      // connection to shed.
      if (per_address_[address] >= options_.max_connections_per_address) continue;
      if (open_ >= options_.max_connections && !make_room()) continue;
      ++open_;
      ++per_address_[address];
      asio::co_spawn(io_, serve(std::move(socket), std::move(address)), log_escape("a connection"));
    }
  }

  // Closes the connection that has waited longest for its request, if any: under load, slow
  // clients make way for new ones, while authenticated and busy connections are kept.
  bool make_room() {
    if (waiting_.empty()) return false;
    Connection* oldest = waiting_.front();
    release(*oldest);
    boost::system::error_code ec;
    oldest->stream->socket().close(ec);
    return true;
  }

  void start_waiting(Connection& c) {
    if (c.waiting || c.trusted || !c.open) return;
    c.place = waiting_.insert(waiting_.end(), &c);
    c.waiting = true;
  }

  void stop_waiting(Connection& c) {
    if (!c.waiting) return;
    waiting_.erase(c.place);
    c.waiting = false;
  }

  // Takes a connection out of the totals, once.
  void release(Connection& c) {
    if (!c.open) return;
    c.open = false;
    stop_waiting(c);
    connections_.erase(&c);
    --open_;
    if (auto it = per_address_.find(c.address); it != per_address_.end() && --it->second <= 0) {
      per_address_.erase(it);
    }
  }

  // Hands the request to the handler and resumes when it answers, from whatever thread.
  awaitable<HttpResponse> call_handler(HttpRequest request) {
    auto initiate = [this, request = std::move(request)](auto completion) mutable {
      auto shared = std::make_shared<decltype(completion)>(std::move(completion));
      auto guard = asio::make_work_guard(io_);
      handler_(std::move(request), [this, shared, guard](HttpResponse response) {
        asio::post(io_, [shared, response = std::move(response)]() mutable {
          (*shared)(std::move(response));
        });
      });
    };
    co_return co_await asio::async_initiate<decltype(use_awaitable), void(HttpResponse)>(
        std::move(initiate), use_awaitable);
  }

  // Writes an answer; a client that does not take it within the body deadline is cut off.
  awaitable<void> write(beast::tcp_stream& stream, unsigned version, HttpResponse response,
                        bool keep_alive, boost::system::error_code& ec) {
    http::response<http::string_body> out{static_cast<http::status>(response.status), version};
    out.set(http::field::server, "allotd");
    out.set(http::field::content_type, response.content_type);
    if (!response.cache_control.empty()) {
      out.set(http::field::cache_control, response.cache_control);
    }
    if (!response.location.empty()) out.set(http::field::location, response.location);
    if (response.replayed) out.set("Idempotent-Replayed", "true");
    for (const auto& [name, value] : response.headers) out.set(name, value);
    out.keep_alive(keep_alive);
    out.body() = std::move(response.body);
    out.prepare_payload();
    stream.expires_after(std::chrono::milliseconds(options_.body_timeout_ms));
    co_await http::async_write(stream, out, asio::redirect_error(use_awaitable, ec));
    stream.expires_never();
  }

  // Reads and drops what the client is still sending after a refusal, for a short while, so that
  // closing the socket does not reset the connection before the client has read the answer.
  static awaitable<void> drain(beast::tcp_stream& stream) {
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(std::chrono::seconds(2));
    std::array<char, 65536> sink{};
    size_t drained = 0;
    while (!ec && drained < 4 * limits::kMaxBodyBytes) {
      drained += co_await stream.async_read_some(asio::buffer(sink),
                                                 asio::redirect_error(use_awaitable, ec));
    }
  }

  // Waits for the next request's first byte on a kept-alive connection, up to the idle timeout.
  awaitable<void> await_next(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                             boost::system::error_code& ec) {
    if (buffer.size() > 0) co_return;
    stream.expires_after(std::chrono::milliseconds(options_.idle_timeout_ms));
    const size_t n = co_await stream.async_read_some(buffer.prepare(limits::kMaxHeaderBytes),
                                                     asio::redirect_error(use_awaitable, ec));
    stream.expires_never();
    buffer.commit(n);
  }

  // Reads the header, or the rest of the request, within `timeout_ms`; past it, `ec` is timeout.
  template <typename ReadOp>
  awaitable<void> read_within(beast::tcp_stream& stream, int64_t timeout_ms, ReadOp read,
                              boost::system::error_code& ec) {
    const ReadDeadline deadline(io_, stream.socket(), timeout_ms);
    co_await read(asio::redirect_error(use_awaitable, ec));
    if (deadline.passed()) ec = beast::error::timeout;
  }

  // Reads one request into `parser`. Returns the refusal to send instead of handling it, if any;
  // `ec` is set when the connection is to be closed without an answer. As parse_request reads
  // (api/http_parse.h), with the connection's deadlines and Expect: 100-continue.
  awaitable<std::optional<Refusal>> read_request(beast::tcp_stream& stream,
                                                 beast::flat_buffer& buffer, Parser& parser,
                                                 bool first, boost::system::error_code& ec) {
    if (!first) co_await await_next(stream, buffer, ec);
    if (ec) co_return std::nullopt;
    co_await read_within(
        stream, options_.header_timeout_ms,
        [&](auto token) { return http::async_read_header(stream, buffer, parser, token); }, ec);
    if (ec) co_return answer_read_error(ec, parser, buffer);
    if (auto refused = check_header(parser)) co_return refused;
    if (parser.get()[http::field::expect] == "100-continue") {
      http::response<http::empty_body> proceed{http::status::continue_, 11};
      co_await http::async_write(stream, proceed, asio::redirect_error(use_awaitable, ec));
      if (ec) co_return std::nullopt;
    }
    co_await read_within(
        stream, options_.body_timeout_ms,
        [&](auto token) { return http::async_read(stream, buffer, parser, token); }, ec);
    if (ec) co_return answer_read_error(ec, parser, buffer);
    co_return std::nullopt;
  }

  // Lets a relay answer the request and use the connection; true when it may go on to another.
  awaitable<bool> hand_over(Connection& self, beast::flat_buffer& buffer,
                            const http::request<http::string_body>& message,
                            std::function<awaitable<bool>(Exchange&)> relay) {
    if (stopping_) co_return false;
    beast::tcp_stream& stream = *self.stream;
    const unsigned version = message.version();
    const bool keep_alive = message.keep_alive();
    Exchange exchange{
        .stream = stream,
        .buffer = buffer,
        .request = message,
        .keep_alive = keep_alive,
        .answer = [this, &stream, version, keep_alive](HttpResponse response) -> awaitable<void> {
          boost::system::error_code ignored;
          co_await write(stream, version, std::move(response), keep_alive && !stopping_, ignored);
        },
        .on_stop = self.on_stop};
    // A relay writes in pieces (a proxied answer's header, then its body as it comes; a
    // stream's bytes as they come): without this, each piece after the first would wait for the
    // client's delayed acknowledgement.
    boost::system::error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    self.relaying = true;
    const bool go_on = co_await relay(exchange);
    self.relaying = false;
    self.on_stop = nullptr;
    co_return go_on&& keep_alive && !stopping_;
  }

  awaitable<void> serve(tcp::socket socket, std::string address) {
    beast::tcp_stream stream(std::move(socket));
    Connection self{.stream = &stream, .address = std::move(address)};
    connections_.insert(&self);
    // Bounded, so that no one piece a parser must hold whole (a header, a trailer, a chunk's line,
    // a relayed answer's header) can grow past it: a read that would is an error, not an
    // allocation.
    beast::flat_buffer buffer(limits::kMaxConnectionBufferBytes);
    try {
      co_await serve_requests(self, buffer);
    } catch (const std::exception& e) {
      // Whatever a peer's bytes made a parser or a relay throw ends this connection alone.
      spdlog::warn("a connection from {} ended by an exception: {}", self.address, e.what());
    }
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    release(self);
  }

  awaitable<void> serve_requests(Connection& self, beast::flat_buffer& buffer) {
    beast::tcp_stream& stream = *self.stream;
    boost::system::error_code ec;
    for (bool first = true; !stopping_ && self.open; first = false) {
      Parser parser;
      limit_parser(parser);
      self.reading = true;
      start_waiting(self);
      std::optional<Refusal> refused = co_await read_request(stream, buffer, parser, first, ec);
      self.reading = false;
      if (refused) {
        boost::system::error_code write_ec;
        co_await write(stream, 11, refused->response(), false, write_ec);
        co_await drain(stream);
        break;
      }
      if (ec) break;
      stop_waiting(self);
      auto& message = parser.get();
      const std::string_view target(message.target().data(), message.target().size());
      // Only the links of published ports use a cookie; other requests do not carry theirs in.
      const bool wants_cookie = target.starts_with(kPortPathPrefix);
      HttpRequest request{
          .method = std::string(message.method_string()),
          .target = std::string(target),
          .authorization = std::string(message[http::field::authorization]),
          .cookie = wants_cookie ? std::string(message[http::field::cookie]) : std::string(),
          .body = std::move(message.body()),
          .remote = self.address,
          .idempotency_key = std::string(message["Idempotency-Key"]),
          .origin = std::string(message[http::field::origin])};
      const unsigned version = message.version();
      const bool keep_alive = message.keep_alive();
      HttpResponse response = co_await call_handler(std::move(request));
      if (response.authenticated) self.trusted = true;
      if (response.relay) {
        if (!co_await hand_over(self, buffer, message, std::move(response.relay))) break;
        continue;
      }
      co_await write(stream, version, std::move(response), keep_alive && !stopping_, ec);
      if (ec || !keep_alive) break;
    }
  }

  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  HttpHandler handler_;
  HttpServerOptions options_;
  uint16_t port_ = 0;
  // Touched on the network thread only, like everything below.
  bool stopping_ = false;
  std::set<Connection*> connections_;
  std::list<Connection*> waiting_;  // Connections waiting for a request, longest first.
  std::unordered_map<std::string, int64_t> per_address_;
  int64_t open_ = 0;
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::bind(const std::string& host, uint16_t port,
                                                     HttpHandler handler,
                                                     HttpServerOptions options) {
  auto server = std::make_unique<BeastServer>(std::move(handler), options);
  if (auto ok = server->listen(host, port); !ok) return std::unexpected(ok.error());
  return server;
}

}  // namespace allot
