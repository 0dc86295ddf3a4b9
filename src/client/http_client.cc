#include "client/http_client.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "common/asio.h"

namespace allot {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class BeastClient final : public HttpClient {
 public:
  BeastClient(std::string host, std::string port)
      : host_(std::move(host)), port_(std::move(port)) {}

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
      http::write(*stream_, request, ec);
      // A server may answer and close before taking the whole body (413): read its answer even
      // when the write broke off.
      const bool write_broke =
          ec == asio::error::broken_pipe || ec == asio::error::connection_reset;
      http::response_parser<http::string_body> parser;
      parser.body_limit(64 << 20);
      if (!ec || write_broke) http::read(*stream_, buffer_, parser, ec);
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
    stream_->connect(endpoints, ec);
    if (ec) stream_.reset();
    buffer_.clear();
  }

  std::unexpected<Error> unreachable(const boost::system::error_code& ec) const {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot reach http://{}:{}: {}", host_, port_, ec.message()));
  }

  asio::io_context io_;
  std::string host_;
  std::string port_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::connect_to(const std::string& base_url) {
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
  return std::make_unique<BeastClient>(std::move(host), std::move(port));
}

}  // namespace allot
