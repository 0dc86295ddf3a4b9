#include "agent/tunnel.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "agent/exec.h"
#include "common/url.h"

namespace allot::agent {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

constexpr std::string_view kTunnelProtocol = "allot-tunnel";
constexpr std::string_view kStreamProtocol = "allot-stream";
// allotd pings a quiet control connection every 10 s: three missed pings and it is taken for
// broken and opened again.
constexpr auto kControlSilence = std::chrono::seconds(35);
constexpr auto kFirstRetry = std::chrono::milliseconds(500);
constexpr auto kLastRetry = std::chrono::seconds(10);
constexpr size_t kMaxLine = size_t{64} * 1024;
// Within the 10 s allotd waits for a stream, so that a port that does not speak TLS is told as
// such.
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);

// The next line of `stream`, without its newline; empty with `ec` set when none comes.
awaitable<std::string> read_line(net::Stream& stream, boost::system::error_code& ec) {
  for (;;) {
    const std::string_view data(static_cast<const char*>(stream.pending.data().data()),
                                stream.pending.size());
    if (const size_t end = data.find('\n'); end != std::string_view::npos) {
      std::string line(data.substr(0, end));
      stream.pending.consume(end + 1);
      co_return line;
    }
    if (data.size() > kMaxLine) {
      ec = asio::error::message_size;
      co_return "";
    }
    stream.conn.expires_after(kControlSilence);
    const size_t n = co_await stream.conn.async_read_some(stream.pending.prepare(4096),
                                                          asio::redirect_error(use_awaitable, ec));
    stream.pending.commit(n);
    if (ec) co_return "";
  }
}

}  // namespace

Tunnel::Tunnel(std::function<std::string()> server_url, PortDialer dialer, ExecArgv exec_argv)
    : server_url_(std::move(server_url)),
      dialer_(std::move(dialer)),
      exec_argv_(std::move(exec_argv)) {}

Tunnel::~Tunnel() { stop(); }

void Tunnel::start(const std::string& credential) {
  authorization_ = "Bearer " + credential;
  asio::co_spawn(io_, keep_open(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

void Tunnel::stop() {
  if (stopping_.exchange(true)) return;
  io_.stop();
  if (thread_.joinable()) thread_.join();
  dials_.stop();
  dials_.join();
}

void Tunnel::set_running(std::set<std::string> instance_ids) {
  const std::lock_guard lock(mutex_);
  running_ = std::move(instance_ids);
}

bool Tunnel::runs(const std::string& instance_id) {
  const std::lock_guard lock(mutex_);
  return running_.contains(instance_id);
}

awaitable<void> Tunnel::keep_open() {
  asio::steady_timer pause(io_);
  std::chrono::milliseconds retry = kFirstRetry;
  while (!stopping_) {
    if (auto where = net::parse_base_url(server_url_()); where) server_ = std::move(*where);
    auto control = co_await net::open_upgraded(server_, "/v1/agent/tunnel", authorization_,
                                               std::string(kTunnelProtocol));
    if (control) {
      spdlog::info("msg=\"tunnel open\"");
      retry = kFirstRetry;
      co_await serve(std::move(*control));
      spdlog::info("msg=\"tunnel closed\"");
    } else {
      spdlog::warn("msg=\"tunnel refused\" error=\"{}\"", control.error().message);
    }
    pause.expires_after(retry);
    boost::system::error_code ec;
    co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
    retry = std::min<std::chrono::milliseconds>(retry * 2, kLastRetry);
  }
}

awaitable<void> Tunnel::serve(net::Stream control) {
  boost::system::error_code ec;
  while (!stopping_ && !ec) {
    std::string line = co_await read_line(control, ec);
    if (ec || line == "{}") continue;  // A ping.
    asio::co_spawn(io_, open_stream(std::move(line)), asio::detached);
  }
}

awaitable<void> Tunnel::open_stream(std::string line) {
  const auto request = nlohmann::json::parse(line, nullptr, false);
  const bool named = request.is_object() && request.contains("stream") &&
                     request["stream"].is_string() && request.contains("instance") &&
                     request["instance"].is_string();
  if (named && request.contains("exec") && request["exec"].is_object()) {
    std::string stream = request["stream"];
    std::string instance = request["instance"];
    co_await open_exec(std::move(stream), std::move(instance), request["exec"]);
    co_return;
  }
  if (!named || !request.contains("port") || !request["port"].is_number_integer()) {
    spdlog::warn("msg=\"tunnel: a request it cannot read\"");
    co_return;
  }
  const std::string stream = request["stream"];
  const std::string instance = request["instance"];
  const int port = request["port"];
  const bool tls = request.value("tls", false);
  const std::string path = "/v1/agent/tunnel/" + percent_encode(stream);
  // The dial may block: it runs on the pool, and its outcome comes back here.
  auto outcome = std::make_shared<std::optional<Result<int>>>();
  auto done = std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
  asio::post(dials_, [this, instance, port, outcome, done] {
    Result<int> dialled =
        runs(instance) ? dialer_(instance, port)
                       : fail(ErrorCode::kNotFound,
                              fmt::format("instance {} does not run on this node", instance));
    asio::post(io_, [outcome, done, dialled = std::move(dialled)]() mutable {
      *outcome = std::move(dialled);
      done->cancel();
    });
  });
  boost::system::error_code ec;
  while (!*outcome) co_await done->async_wait(asio::redirect_error(use_awaitable, ec));
  Result<int> dialled = std::move(**outcome);
  if (!dialled) {
    co_await refuse_stream(path, dialled.error().message);
    co_return;
  }
  tcp::socket socket(io_);
  socket.assign(tcp::v4(), *dialled, ec);
  if (ec) {
    ::close(*dialled);
    co_return;
  }
  beast::tcp_stream local(std::move(socket));
  // An https port: this end speaks TLS to the instance, so that allotd's proxy speaks plain HTTP
  // through the tunnel. The instance's certificate is its own, most often self-signed: it is not
  // checked (the connection never leaves the node).
  std::optional<net::TlsStream> secure;
  if (tls) {
    secure.emplace(std::move(local), tls_);
    beast::get_lowest_layer(*secure).expires_after(kHandshakeTimeout);
    co_await secure->async_handshake(asio::ssl::stream_base::client,
                                     asio::redirect_error(use_awaitable, ec));
    beast::get_lowest_layer(*secure).expires_never();
    if (ec) {
      std::string why = fmt::format("port {} of instance {} did not complete a TLS handshake: {}",
                                    port, instance, ec.message());
      co_await refuse_stream(path, std::move(why));
      co_return;
    }
  }
  auto back =
      co_await net::open_upgraded(server_, path, authorization_, std::string(kStreamProtocol));
  if (!back) {
    spdlog::warn("msg=\"tunnel: a stream could not be opened\" error=\"{}\"", back.error().message);
    co_return;
  }
  if (secure) {
    co_await net::splice(back->conn, back->pending, *secure);
  } else {
    beast::flat_buffer nothing;
    co_await net::splice(back->conn, back->pending, local, nothing);
  }
}

awaitable<void> Tunnel::refuse_stream(std::string path, std::string why) {
  const std::string target = path + "?refused=" + percent_encode(why);
  (void)co_await net::open_upgraded(server_, target, authorization_, std::string(kStreamProtocol));
}

awaitable<void> Tunnel::open_exec(std::string stream, std::string instance, nlohmann::json exec) {
  const std::string path = "/v1/agent/tunnel/" + percent_encode(stream);
  ExecSpec spec;
  const nlohmann::json argv = exec.value("argv", nlohmann::json::array());
  for (const auto& arg : argv) {
    if (arg.is_string()) spec.argv.push_back(arg.get<std::string>());
  }
  spec.tty = exec.value("tty", false);
  spec.cols = std::clamp(exec.value("cols", 80), 1, 9999);
  spec.rows = std::clamp(exec.value("rows", 24), 1, 9999);
  if (!runs(instance) || spec.argv.empty()) {
    (void)co_await net::open_upgraded(
        server_,
        path + "?refused=" +
            percent_encode(fmt::format("instance {} does not run on this node", instance)),
        authorization_, std::string(kStreamProtocol));
    co_return;
  }
  spec.argv = exec_argv_(instance, spec.argv, spec.tty);
  auto back =
      co_await net::open_upgraded(server_, path, authorization_, std::string(kStreamProtocol));
  if (!back) co_return;
  co_await run_exec(*back, std::move(spec));
}

}  // namespace allot::agent
