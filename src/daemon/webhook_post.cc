#include "daemon/webhook_post.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <memory>

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

struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

// Connects without blocking past the deadline, trying each address in turn.
Status connect_to(Socket& socket, const WebhookTarget& target, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string host = target.host;
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  if (int rc = ::getaddrinfo(host.c_str(), target.port.c_str(), &hints, &found); rc != 0) {
    return unavailable(fmt::format("cannot resolve {}: {}", target.host, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket attempt{::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol)};
    if (attempt.fd < 0) continue;
    if (::connect(attempt.fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    if (!wait_for(attempt.fd, POLLOUT, deadline)) continue;
    int error = 0;
    socklen_t size = sizeof error;
    if (::getsockopt(attempt.fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) continue;
    std::swap(socket.fd, attempt.fd);
    return {};
  }
  return unavailable(fmt::format("cannot connect to {}:{}", target.host, target.port));
}

// Reads up to the end of the status line and parses "HTTP/1.x NNN".
Result<int> read_status(int fd, Deadline deadline) {
  std::string data;
  std::array<char, 512> buffer{};
  while (data.find("\r\n") == std::string::npos && data.size() < 1024) {
    if (!wait_for(fd, POLLIN, deadline)) return unavailable("timed out waiting for the answer");
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) return unavailable("the connection closed before an answer");
    data.append(buffer.data(), static_cast<size_t>(n));
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
                 int64_t timeout_ms) {
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Socket socket;
  if (auto ok = connect_to(socket, target, deadline); !ok) return std::unexpected(ok.error());
  std::string request = fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: allotd\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nConnection: close\r\n",
      target.path, target.host, target.port, body.size());
  for (const auto& [name, value] : headers) request += fmt::format("{}: {}\r\n", name, value);
  request += "\r\n";
  request += body;
  size_t sent = 0;
  while (sent < request.size()) {
    if (!wait_for(socket.fd, POLLOUT, deadline)) return unavailable("timed out sending");
    const ssize_t n = ::send(socket.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) return unavailable("the connection broke while sending");
    sent += static_cast<size_t>(n);
  }
  return read_status(socket.fd, deadline);
}

}  // namespace allot
