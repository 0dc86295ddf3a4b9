#include "daemon/webhook_post.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <memory>
#include <span>

#include <fmt/format.h>

namespace allot {
namespace {

using Deadline = std::chrono::steady_clock::time_point;

int remaining_ms(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until the socket is ready for `events` or the deadline passes.
bool wait_for(int fd, short events, Deadline deadline) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  return ::poll(&p, 1, remaining_ms(deadline)) == 1;
}

std::unexpected<Error> unavailable(std::string why) {
  return fail(ErrorCode::kUnavailable, std::move(why));
}

// A non-blocking connection, plain or TLS; every step waits at most until the deadline.
class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }

  // Connects to the first address of the host that answers and that a webhook may reach. The
  // addresses are checked as resolved now, and the connection goes to the checked address itself,
  // so that a name that resolved to a public address before cannot be swapped for an internal one.
  Status open(const std::string& host, const std::string& port, const AddressAllowList& allow,
              Deadline deadline) {
    auto addresses = resolve_host(host, port);
    if (!addresses) return unavailable(addresses.error().message);
    std::string refused;
    for (const ResolvedAddress& a : *addresses) {
      if (!webhook_may_reach(a.ip, allow)) {
        refused = a.ip.to_string();
        continue;
      }
      const int fd = ::socket(a.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (fd < 0) continue;
      int error = 0;
      socklen_t size = sizeof error;
      const auto* to = reinterpret_cast<const sockaddr*>(&a.address);
      const bool connected = (::connect(fd, to, a.length) == 0 || errno == EINPROGRESS) &&
                             wait_for(fd, POLLOUT, deadline) &&
                             ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 &&
                             error == 0;
      if (connected) {
        fd_ = fd;
        return {};
      }
      ::close(fd);
    }
    if (!refused.empty()) {
      return unavailable(fmt::format(
          "refused: {} is at {}, an internal address not in webhook_allow", host, refused));
    }
    return unavailable(fmt::format("cannot connect to {}:{}", host, port));
  }

  // TLS over the connection, checking the server's certificate against the system's trusted
  // roots and the host name.
  Status start_tls(const std::string& host, Deadline deadline) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (ctx_ == nullptr) return unavailable("cannot set up TLS");
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_default_verify_paths(ctx_);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1 || SSL_set1_host(ssl_, host.c_str()) != 1 ||
        SSL_set_tlsext_host_name(ssl_, host.c_str()) != 1) {
      return unavailable("cannot set up TLS");
    }
    for (;;) {
      const int rc = SSL_connect(ssl_);
      if (rc == 1) return {};
      if (!wait_tls(rc, deadline)) {
        const long verify = SSL_get_verify_result(ssl_);
        return unavailable(verify != X509_V_OK
                               ? fmt::format("TLS: {}", X509_verify_cert_error_string(verify))
                               : "the TLS handshake failed");
      }
    }
  }

  Status write_all(std::string_view data, Deadline deadline) {
    while (!data.empty()) {
      if (ssl_ != nullptr) {
        const int n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
        if (n > 0) data.remove_prefix(static_cast<size_t>(n));
        if (n <= 0 && !wait_tls(n, deadline)) return unavailable("the connection broke");
        continue;
      }
      if (!wait_for(fd_, POLLOUT, deadline)) return unavailable("timed out sending");
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EAGAIN) continue;
      if (n <= 0) return unavailable("the connection broke while sending");
      data.remove_prefix(static_cast<size_t>(n));
    }
    return {};
  }

  // Some bytes, or an error when the connection closed or the deadline passed.
  Result<size_t> read_some(std::span<char> buffer, Deadline deadline) {
    for (;;) {
      if (ssl_ != nullptr) {
        const int n = SSL_read(ssl_, buffer.data(), static_cast<int>(buffer.size()));
        if (n > 0) return static_cast<size_t>(n);
        if (!wait_tls(n, deadline)) return unavailable("the connection closed before an answer");
        continue;
      }
      if (!wait_for(fd_, POLLIN, deadline)) return unavailable("timed out waiting for the answer");
      const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n < 0 && errno == EAGAIN) continue;
      if (n <= 0) return unavailable("the connection closed before an answer");
      return static_cast<size_t>(n);
    }
  }

 private:
  // After a TLS call returned `rc`: waits for what it needs and says whether to try again.
  bool wait_tls(int rc, Deadline deadline) {
    switch (SSL_get_error(ssl_, rc)) {
      case SSL_ERROR_WANT_READ:
        return wait_for(fd_, POLLIN, deadline);
      case SSL_ERROR_WANT_WRITE:
        return wait_for(fd_, POLLOUT, deadline);
      default:
        ERR_clear_error();
        return false;
    }
  }

  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

// Reads up to the end of the status line and parses "HTTP/1.x NNN".
Result<int> read_status(Connection& connection, Deadline deadline) {
  std::string data;
  std::array<char, 512> buffer{};
  while (data.find("\r\n") == std::string::npos && data.size() < 1024) {
    auto n = connection.read_some(buffer, deadline);
    if (!n) return std::unexpected(n.error());
    data.append(buffer.data(), *n);
  }
  int status = 0;
  const bool http = data.starts_with("HTTP/1.") && data.size() >= 12 && data[8] == ' ';
  if (!http || std::from_chars(data.data() + 9, data.data() + 12, status).ec != std::errc{} ||
      status < 100 || status > 599) {
    return unavailable("the answer is not HTTP");
  }
  return status;
}

}  // namespace

Result<int> post(const WebhookTarget& target, const std::string& body, const HeaderList& headers,
                 const AddressAllowList& allow, int64_t timeout_ms) {
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string host = target.bare_host();
  Connection connection;
  if (auto ok = connection.open(host, target.port, allow, deadline); !ok) {
    return std::unexpected(ok.error());
  }
  if (target.tls) {
    if (auto ok = connection.start_tls(host, deadline); !ok) return std::unexpected(ok.error());
  }
  std::string request = fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: allotd\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nConnection: close\r\n",
      target.path, target.host, target.port, body.size());
  for (const auto& [name, value] : headers) request += fmt::format("{}: {}\r\n", name, value);
  request += "\r\n";
  request += body;
  if (auto ok = connection.write_all(request, deadline); !ok) return std::unexpected(ok.error());
  return read_status(connection, deadline);
}

}  // namespace allot
