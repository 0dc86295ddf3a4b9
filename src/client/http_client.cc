#include "client/http_client.h"

#include <charconv>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

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

// Where one server listens.
struct Server {
  std::string host;
  std::string port;

  bool operator==(const Server&) const = default;
};

Result<Server> parse_server(std::string_view base_url) {
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
  return Server{.host = std::move(host), .port = std::move(port)};
}

// One server, over one kept-alive connection.
class BeastClient final : public HttpClient {
 public:
  BeastClient(Server server, std::chrono::milliseconds timeout)
      : host_(std::move(server.host)), port_(std::move(server.port)), timeout_(timeout) {}

  Result<ClientResponse> exchange(const ClientRequest& sent) override {
    // A kept-alive connection may have been closed by the server since the last call: one retry
    // on a fresh connection covers that. Only requests that never reached the server are retried.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = stream_.has_value();
      boost::system::error_code ec;
      reached_ = false;
      if (!stream_) connect(ec);
      if (ec) return unreachable(ec);
      reached_ = true;
      http::request<http::string_body> request{http::string_to_verb(sent.method), sent.target, 11};
      if (request.method() == http::verb::unknown) request.method_string(sent.method);
      request.set(http::field::host, host_);
      request.set(http::field::user_agent, "allot");
      if (!sent.authorization.empty()) {
        request.set(http::field::authorization, sent.authorization);
      }
      if (!sent.idempotency_key.empty()) request.set("Idempotency-Key", sent.idempotency_key);
      if (!sent.body.empty()) request.set(http::field::content_type, "application/json");
      request.body() = sent.body;
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
      return ClientResponse{.status = static_cast<int>(response.result_int()),
                            .body = std::move(response.body()),
                            .location = std::string(response[http::field::location])};
    }
    return fail(ErrorCode::kUnavailable, "the server closed the connection");
  }

  std::string current_url() const override { return fmt::format("http://{}:{}", host_, port_); }

  // Whether the last request was written to a connection: if so, the server may have applied it
  // even when no answer came.
  bool reached() const { return reached_; }

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
  bool reached_ = false;
};

// The servers given, each over its own connection, and the one in use: see the header.
class ReplicasClient final : public HttpClient {
 public:
  ReplicasClient(std::vector<Server> servers, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds failover_wait)
      : timeout_(timeout), failover_wait_(servers.size() > 1 ? failover_wait : kNoWait) {
    for (Server& server : servers) {
      clients_.push_back(std::make_unique<BeastClient>(std::move(server), timeout_));
    }
  }

  Result<ClientResponse> exchange(const ClientRequest& sent) override {
    const auto deadline = std::chrono::steady_clock::now() + failover_wait_;
    auto backoff = std::chrono::milliseconds(100);
    size_t failed_in_turn = 0;
    int redirects = 0;
    for (;;) {
      BeastClient& client = *clients_[current()];
      auto response = client.exchange(sent);
      if (response && response->status == 307 && redirects < kMaxRedirects) {
        if (auto leader = parse_server(base_of(response->location)); leader) {
          use(std::move(*leader));
          ++redirects;
          continue;
        }
      }
      // Only answers that say nothing was done, and requests that never reached a server (or
      // reads, or writes the server applies once by their key), go again.
      const bool again =
          response ? response->status == 503
                   : !client.reached() || sent.method == "GET" || !sent.idempotency_key.empty();
      if (!again || std::chrono::steady_clock::now() >= deadline) return response;
      if (++failed_in_turn >= clients_.size()) {
        failed_in_turn = 0;
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(2'000));
      }
      std::lock_guard lock(mutex_);
      current_ = (current_ + 1) % clients_.size();
    }
  }

  std::string current_url() const override {
    std::lock_guard lock(mutex_);
    return clients_[current_]->current_url();
  }

 private:
  static constexpr std::chrono::milliseconds kNoWait{0};
  static constexpr int kMaxRedirects = 3;

  // "http://HOST:PORT" of a URL that may go on with a path.
  static std::string_view base_of(std::string_view url) {
    const size_t host = url.find("//");
    return url.substr(0, url.find('/', host == std::string_view::npos ? 0 : host + 2));
  }

  size_t current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }

  // Makes `server` the one in use, adding it when it was not given.
  void use(Server server) {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < clients_.size(); ++i) {
      if (clients_[i]->current_url() == fmt::format("http://{}:{}", server.host, server.port)) {
        current_ = i;
        return;
      }
    }
    clients_.push_back(std::make_unique<BeastClient>(std::move(server), timeout_));
    current_ = clients_.size() - 1;
  }

  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds failover_wait_;
  // Grown (never shrunk) by the sending thread only; current_url() reads under mutex_.
  std::vector<std::unique_ptr<BeastClient>> clients_;
  mutable std::mutex mutex_;
  size_t current_ = 0;  // Guarded by mutex_.
};

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::connect_to(
    const std::string& base_urls, std::chrono::milliseconds timeout,
    std::chrono::milliseconds failover_wait) {
  std::vector<Server> servers;
  std::string_view rest = base_urls;
  for (;;) {
    const size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (one.starts_with(' ')) one.remove_prefix(1);
    while (one.ends_with(' ')) one.remove_suffix(1);
    auto server = parse_server(one);
    if (!server) return std::unexpected(server.error());
    servers.push_back(std::move(*server));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return std::make_unique<ReplicasClient>(std::move(servers), timeout, failover_wait);
}

}  // namespace allot
