#include "api/http_server.h"

#include <array>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/asio.h"
#include "common/limits.h"

namespace allot {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

std::string error_body(std::string_view code, std::string_view message) {
  return fmt::format(R"({{"error":{{"code":"{}","message":"{}"}}}})", code, message);
}

// One open connection, as the server sees it.
struct Connection {
  beast::tcp_stream* stream;
  bool reading = true;  // Waiting for a request: safe to close on stop.
};

class BeastServer final : public HttpServer {
 public:
  explicit BeastServer(HttpHandler handler) : acceptor_(io_), handler_(std::move(handler)) {}

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
    asio::co_spawn(io_, accept_loop(), asio::detached);
    io_.run();
  }

  void stop() override {
    asio::post(io_, [this] {
      if (stopping_) return;
      stopping_ = true;
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (Connection* c : connections_) {
        if (c->reading) c->stream->socket().close(ec);
      }
    });
  }

 private:
  awaitable<void> accept_loop() {
    while (!stopping_) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (stopping_) break;
        continue;
      }
      if (connections_.size() >= limits::kMaxConnections) continue;  // Dropped: closes socket.
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
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

  awaitable<void> write(beast::tcp_stream& stream, unsigned version, const HttpResponse& response,
                        bool keep_alive, boost::system::error_code& ec) {
    http::response<http::string_body> out{static_cast<http::status>(response.status), version};
    out.set(http::field::server, "allotd");
    out.set(http::field::content_type, response.content_type);
    if (!response.cache_control.empty()) {
      out.set(http::field::cache_control, response.cache_control);
    }
    out.keep_alive(keep_alive);
    out.body() = response.body;
    out.prepare_payload();
    co_await http::async_write(stream, out, asio::redirect_error(use_awaitable, ec));
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

  awaitable<void> serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    Connection self{&stream};
    connections_.insert(&self);
    beast::flat_buffer buffer;
    boost::system::error_code ec;
    std::string remote = stream.socket().remote_endpoint(ec).address().to_string();
    while (!stopping_) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(limits::kMaxBodyBytes);
      parser.header_limit(static_cast<std::uint32_t>(limits::kMaxHeaderBytes));
      self.reading = true;
      stream.expires_after(std::chrono::seconds(limits::kIdleTimeoutS));
      co_await http::async_read_header(stream, buffer, parser,
                                       asio::redirect_error(use_awaitable, ec));
      if (!ec && parser.get()[http::field::expect] == "100-continue") {
        http::response<http::empty_body> proceed{http::status::continue_, 11};
        co_await http::async_write(stream, proceed, asio::redirect_error(use_awaitable, ec));
      }
      if (!ec) {
        co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      }
      self.reading = false;
      stream.expires_never();
      if (ec == http::error::body_limit) {
        const HttpResponse too_large{
            413, error_body("body_too_large",
                            fmt::format("the body is over {} bytes", limits::kMaxBodyBytes))};
        co_await write(stream, 11, too_large, false, ec);
        co_await drain(stream);
        break;
      }
      if (ec) break;
      auto& message = parser.get();
      HttpRequest request{.method = std::string(message.method_string()),
                          .target = std::string(message.target()),
                          .authorization = std::string(message[http::field::authorization]),
                          .body = std::move(message.body()),
                          .remote = remote};
      const unsigned version = message.version();
      const bool keep_alive = message.keep_alive();
      HttpResponse response = co_await call_handler(std::move(request));
      co_await write(stream, version, response, keep_alive && !stopping_, ec);
      if (ec || !keep_alive) break;
    }
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    connections_.erase(&self);
  }

  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  HttpHandler handler_;
  uint16_t port_ = 0;
  bool stopping_ = false;              // Touched on the network thread only.
  std::set<Connection*> connections_;  // Likewise.
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::bind(const std::string& host, uint16_t port,
                                                     HttpHandler handler) {
  auto server = std::make_unique<BeastServer>(std::move(handler));
  if (auto ok = server->listen(host, port); !ok) return std::unexpected(ok.error());
  return server;
}

}  // namespace allot
