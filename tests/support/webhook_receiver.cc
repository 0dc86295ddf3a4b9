#include "support/webhook_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <boost/algorithm/string/case_conv.hpp>

namespace allot::testing {
namespace {

// Parses the request line and the header fields of data[0, header_end); returns Content-Length.
size_t parse_head(const std::string& data, size_t header_end, WebhookReceiver::Request& out) {
  const std::string first = data.substr(0, data.find("\r\n"));
  out.method = first.substr(0, first.find(' '));
  out.target = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
  size_t line_start = first.size() + 2;
  while (line_start < header_end) {
    const size_t line_end = data.find("\r\n", line_start);
    const std::string line = data.substr(line_start, line_end - line_start);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      out.headers[boost::algorithm::to_lower_copy(line.substr(0, colon))] = value;
    }
    line_start = line_end + 2;
  }
  auto length = out.headers.find("content-length");
  return length == out.headers.end() ? 0 : std::stoul(length->second);
}

// Reads until the headers are in and then the body that Content-Length announces.
bool read_request(int fd, WebhookReceiver::Request& out) {
  std::string data;
  std::array<char, 4096> buffer{};
  size_t header_end = std::string::npos;
  size_t length = 0;
  while (header_end == std::string::npos || data.size() < header_end + 4 + length) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return false;
    data.append(buffer.data(), static_cast<size_t>(n));
    if (header_end != std::string::npos) continue;
    header_end = data.find("\r\n\r\n");
    if (header_end != std::string::npos) length = parse_head(data, header_end, out);
  }
  out.body = data.substr(header_end + 4, length);
  return true;
}

}  // namespace

WebhookReceiver::WebhookReceiver() {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("the webhook receiver cannot listen");
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

WebhookReceiver::~WebhookReceiver() {
  stopping_ = true;
  thread_.join();
  ::close(listener_);
}

std::string WebhookReceiver::url(const std::string& path) const {
  return fmt::format("http://127.0.0.1:{}{}", port_, path);
}

void WebhookReceiver::script(std::deque<int> statuses) {
  std::lock_guard lock(mutex_);
  script_ = std::move(statuses);
}

void WebhookReceiver::set_default(int status) {
  std::lock_guard lock(mutex_);
  default_status_ = status;
}

std::vector<WebhookReceiver::Request> WebhookReceiver::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void WebhookReceiver::serve() {
  while (!stopping_) {
    pollfd waiting{.fd = listener_, .events = POLLIN, .revents = 0};
    if (::poll(&waiting, 1, 50) <= 0) continue;
    const int connection = ::accept(listener_, nullptr, nullptr);
    if (connection < 0) continue;
    handle(connection);
    ::close(connection);
  }
}

void WebhookReceiver::handle(int connection) {
  Request request;
  if (!read_request(connection, request)) return;
  {
    std::lock_guard lock(mutex_);
    if (script_.empty()) {
      request.answered = default_status_;
    } else {
      request.answered = script_.front();
      script_.pop_front();
    }
    requests_.push_back(request);
  }
  const std::string answer = fmt::format(
      "HTTP/1.1 {} X\r\nContent-Length: 2\r\nContent-Type: application/json\r\n"
      "Connection: close\r\n\r\n{{}}",
      request.answered);
  (void)::send(connection, answer.data(), answer.size(), MSG_NOSIGNAL);
}

}  // namespace allot::testing
