#include <utility>  // Before asio: Boost 1.74's headers use std::exchange without it.

#include "fleet_waits.h"

#include <charconv>
#include <string_view>
#include <thread>

#include <boost/asio.hpp>

namespace fleet {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// 127.0.0.2 onwards: node n's own loopback address.
asio::ip::address_v4 address_of(size_t n) {
  return asio::ip::address_v4(static_cast<uint32_t>((127U << 24) + 2 + n));
}

int64_t number_after(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return -1;
  int64_t value = -1;
  const char* first = text.data() + at + key.size();
  std::from_chars(first, text.data() + text.size(), value);
  return value;
}

}  // namespace

struct Wait : std::enable_shared_from_this<Wait> {
  Wait(asio::io_context& io, const WaitingNode& node, tcp::endpoint server, Waits::Impl& owner)
      : socket(io), retry(io), node(node), server(std::move(server)), owner(owner) {}

  void open();
  void send();
  void read_head();
  void read_body(size_t length);
  void again(bool broken);

  tcp::socket socket;
  asio::steady_timer retry;
  const WaitingNode& node;
  tcp::endpoint server;
  Waits::Impl& owner;
  asio::streambuf in;
  std::string request;
  int64_t seen = 0;
};

struct Waits::Impl {
  std::vector<WaitingNode> nodes;
  std::function<void(size_t)> woken;
  asio::io_context io;
  std::vector<std::shared_ptr<Wait>> waits;
  std::atomic<long> answered{0}, failed{0};
  std::thread thread;
};

void Wait::open() {
  boost::system::error_code ec;
  socket = tcp::socket(socket.get_executor());
  socket.open(tcp::v4(), ec);
  if (!ec) socket.bind(tcp::endpoint(address_of(node.index), 0), ec);
  if (ec) return again(true);
  socket.async_connect(server, [self = shared_from_this()](boost::system::error_code error) {
    if (error) return self->again(true);
    self->send();
  });
}

void Wait::send() {
  seen = std::max(seen, node.generation->load());
  const std::string body = "{\"generation\":" + std::to_string(seen) + "}";
  request = "POST /v1/agent/wait HTTP/1.1\r\nHost: allotd\r\nAuthorization: Bearer " +
            node.credential +
            "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n\r\n" + body;
  asio::async_write(socket, asio::buffer(request),
                    [self = shared_from_this()](boost::system::error_code error, size_t) {
                      if (error) return self->again(true);
                      self->read_head();
                    });
}

void Wait::read_head() {
  asio::async_read_until(
      socket, in, "\r\n\r\n",
      [self = shared_from_this()](boost::system::error_code error, size_t head_size) {
        if (error) return self->again(true);
        const std::string head(
            asio::buffers_begin(self->in.data()),
            asio::buffers_begin(self->in.data()) + static_cast<std::ptrdiff_t>(head_size));
        self->in.consume(head_size);
        const int64_t length = number_after(head, "Content-Length: ");
        if (head.rfind("HTTP/1.1 200", 0) != 0 || length < 0) return self->again(true);
        self->read_body(static_cast<size_t>(length));
      });
}

void Wait::read_body(size_t length) {
  const size_t have = in.size();
  asio::async_read(socket, in, asio::transfer_exactly(length > have ? length - have : 0),
                   [self = shared_from_this(), length](boost::system::error_code error, size_t) {
                     if (error) return self->again(true);
                     const std::string body(asio::buffers_begin(self->in.data()),
                                            asio::buffers_begin(self->in.data()) +
                                                static_cast<std::ptrdiff_t>(length));
                     self->in.consume(length);
                     ++self->owner.answered;
                     const int64_t generation = number_after(body, "\"generation\":");
                     if (generation > self->seen) {
                       self->seen = generation;
                       self->owner.woken(self->node.index);
                     }
                     self->again(false);
                   });
}

void Wait::again(bool broken) {
  if (!broken) return send();
  ++owner.failed;
  boost::system::error_code ignored;
  socket.close(ignored);
  in.consume(in.size());
  retry.expires_after(std::chrono::milliseconds(500));
  retry.async_wait([self = shared_from_this()](boost::system::error_code error) {
    if (!error) self->open();
  });
}

Waits::Waits(std::vector<WaitingNode> nodes, uint16_t port, std::function<void(size_t)> woken)
    : impl_(std::make_unique<Impl>()) {
  impl_->nodes = std::move(nodes);
  impl_->woken = std::move(woken);
  const tcp::endpoint server(asio::ip::make_address_v4("127.0.0.1"), port);
  for (const WaitingNode& node : impl_->nodes) {
    impl_->waits.push_back(std::make_shared<Wait>(impl_->io, node, server, *impl_));
    impl_->waits.back()->open();
  }
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

Waits::~Waits() {
  impl_->io.stop();
  impl_->thread.join();
}

long Waits::answered() const { return impl_->answered; }
long Waits::failed() const { return impl_->failed; }

}  // namespace fleet
