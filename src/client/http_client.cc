#include "client/http_client.h"

#include <charconv>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "common/asio.h"

namespace allot {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// How long a connection may take to open; a request's timeout is the client's own.
constexpr auto kConnectTimeout = std::chrono::seconds(10);

class BeastClient final : public HttpClient {
 public:
  BeastClient(std::string host, std::string port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(std::move(port)), timeout_(timeout) {}

  Result<ClientResponse> send(const std::string& method, const std::string& target,
                              const std::string& body, const std::string& key) override {
    return send_raw(method, target, body, key.empty() ? "" : "Bearer " + key);
  }

  Result<ClientResponse> send_raw(const std::string& method, const std::string& target,
                                  const std::string& body,
                                  const std::string& authorization) override {
    // A kept-alive connection may have been closed by the server since the last call: one retry
    // on a fresh connection covers that. Only requests that never reached the server are retried.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = stream_.has_value();
      boost::system::error_code ec;
      if (!stream_) connect(ec);
      if (ec) return unreachable(ec);
      http::request<http::string_body> request{http::string_to_verb(method), target, 11};
      if (request.method() == http::verb::unknown) request.method_string(method);
      request.set(http::field::host, host_);
      request.set(http::field::user_agent, "allot");
      if (!authorization.empty()) request.set(http::field::authorization, authorization);
      if (!body.empty()) request.set(http::field::content_type, "application/json");
      request.body() = body;
      request.prepare_payload();
      // Blocking calls made of asynchronous ones, so that the stream's timer bounds them: a
      // server that stops answering (or a connection that died unseen) ends in a timeout.
      stream_->expires_after(timeout_);
      http::async_write(*stream_, request, [&ec](boost::system::error_code e, size_t) { ec = e; });
      run();
      // A server may answer and close before taking the whole body (413): read its answer even
      // when the write broke off.
      const bool write_broke =
          ec == asio::error::broken_pipe || ec == asio::error::connection_reset;
      http::response_parser<http::string_body> parser;
      parser.body_limit(64 << 20);
      if (!ec || write_broke) {
        http::async_read(*stream_, buffer_, parser,
                         [&ec](boost::system::error_code e, size_t) { ec = e; });
        run();
      }
      if (ec) {
        stream_.reset();
        buffer_.clear();
        if (reused && (ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
                       ec == asio::error::broken_pipe || ec == asio::error::eof)) {
          continue;
        }
        return unreachable(ec);
      }
      auto response = parser.release();
      if (!response.keep_alive()) stream_.reset();
      return ClientResponse{static_cast<int>(response.result_int()), std::move(response.body())};
    }
    return fail(ErrorCode::kUnavailable, "the server closed the connection");
  }

 private:
  void connect(boost::system::error_code& ec) {
    tcp::resolver resolver(io_);
    auto endpoints = resolver.resolve(host_, port_, ec);
    if (ec) return;
    stream_.emplace(io_);
    stream_->expires_after(kConnectTimeout);
    stream_->async_connect(endpoints,
                           [&ec](boost::system::error_code e, const tcp::endpoint&) { ec = e; });
    run();
    if (ec) stream_.reset();
    buffer_.clear();
  }

  // Runs what was started until it has ended.
  void run() {
    io_.restart();
    io_.run();
  }

  std::unexpected<Error> unreachable(const boost::system::error_code& ec) const {
    const bool timed_out = ec == beast::error::timeout;
    return fail(ErrorCode::kUnavailable,
                timed_out
                    ? fmt::format("http://{}:{} did not answer within {} s", host_, port_,
                                  timeout_.count() / 1000)
                    : fmt::format("cannot reach http://{}:{}: {}", host_, port_, ec.message()));
  }

  asio::io_context io_;
  std::string host_;
  std::string port_;
  std::chrono::milliseconds timeout_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::connect_to(const std::string& base_url,
                                                           std::chrono::milliseconds timeout) {
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = base_url;
  if (!rest.starts_with(kScheme)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("server URL must start with http://, not '{}'", base_url));
  }
  rest.remove_prefix(kScheme.size());
  while (rest.ends_with('/')) rest.remove_suffix(1);
  const size_t colon = rest.rfind(':');
  std::string host(rest.substr(0, colon));
  std::string port = colon == std::string_view::npos ? "80" : std::string(rest.substr(colon + 1));
  unsigned number = 0;
  const char* end = port.data() + port.size();
  if (host.empty() || std::from_chars(port.data(), end, number).ptr != end || number == 0 ||
      number > 65535 || host.find('/') != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("server URL must be http://HOST:PORT, not '{}'", base_url));
  }
  return std::make_unique<BeastClient>(std::move(host), std::move(port), timeout);
}

}  // namespace allot
