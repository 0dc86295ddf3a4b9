#include "api/tunnel_hub.h"

#include <chrono>
#include <deque>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/reply.h"
#include "common/spawned.h"

namespace allot {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// How long an agent has to dial back, and how often a quiet control connection is pinged (the
// agent takes three missed pings for a dead connection and opens a new one).
constexpr auto kDialBackTimeout = std::chrono::seconds(10);
constexpr auto kPingInterval = std::chrono::seconds(10);
constexpr size_t kMaxIdlePerKey = 8;

std::string new_stream_id(uint64_t counter) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("str_{:016x}{:08x}", random(), counter & 0xffffffffU);
}

}  // namespace

// A dialled-back connection: its relay waits on `released` until the last lease lets go.
struct TunnelLease::Held {
  Held(beast::tcp_stream* c, beast::flat_buffer* p)
      : conn(c), pending(p), released(c->get_executor(), asio::steady_timer::time_point::max()) {}
  void release() {
    done = true;
    released.cancel();
  }
  beast::tcp_stream* conn;
  beast::flat_buffer* pending;
  asio::steady_timer released;
  bool done = false;
};

TunnelLease& TunnelLease::operator=(TunnelLease&& other) noexcept {
  if (this != &other) {
    if (held_) held_->release();
    held_ = std::move(other.held_);
  }
  return *this;
}

TunnelLease::~TunnelLease() {
  if (held_) held_->release();
}

beast::tcp_stream& TunnelLease::conn() { return *held_->conn; }
beast::flat_buffer& TunnelLease::pending() { return *held_->pending; }

// A node's control connection: lines to send, and a timer that wakes its writer.
struct TunnelHub::Control {
  explicit Control(beast::tcp_stream* s)
      : stream(s), wake(s->get_executor(), asio::steady_timer::time_point::max()) {}
  void close() {
    closed = true;
    wake.cancel();
    boost::system::error_code ignored;
    if (stream != nullptr) stream->socket().close(ignored);
  }
  beast::tcp_stream* stream;  // Null once its relay has ended.
  asio::steady_timer wake;
  std::deque<std::string> outbox;
  bool closed = false;
};

// An open() waiting for its agent to dial back.
struct TunnelHub::Pending {
  Pending(std::string node, const asio::any_io_executor& executor)
      : node_id(std::move(node)), timer(executor) {}
  std::string node_id;
  asio::steady_timer timer;
  std::optional<Result<TunnelLease>> result;
};

// Reads what the agent sends on its control connection (nothing, by the protocol) until it ends,
// then closes the control.
awaitable<void> TunnelHub::watch_close(std::shared_ptr<Control> control,
                                       beast::tcp_stream& stream) {
  boost::system::error_code ec;
  std::vector<char> sink(256);
  while (!ec && !control->closed) {
    co_await stream.async_read_some(asio::buffer(sink), asio::redirect_error(use_awaitable, ec));
  }
  control->close();
}

awaitable<bool> TunnelHub::serve_control(std::string node_id, Exchange& exchange) {
  boost::system::error_code ec;
  co_await switch_protocols(exchange, kTunnelProtocol, ec);
  if (ec) co_return false;
  auto control = std::make_shared<Control>(&exchange.stream);
  if (auto old = controls_.find(node_id); old != controls_.end()) old->second->close();
  controls_[node_id] = control;
  exchange.on_stop = [control] { control->close(); };
  spdlog::info("node {} opened its tunnel", node_id);
  // The agent sends nothing on it: a read that ends says the connection has.
  asio::co_spawn(exchange.stream.get_executor(), watch_close(control, exchange.stream),
                 log_escape("a tunnel's watch"));
  while (!control->closed) {
    if (control->outbox.empty()) {
      control->wake.expires_after(kPingInterval);
      co_await control->wake.async_wait(asio::redirect_error(use_awaitable, ec));
      if (control->closed) break;
      if (control->outbox.empty()) control->outbox.emplace_back("{}\n");
    }
    std::string line = std::move(control->outbox.front());
    control->outbox.pop_front();
    co_await asio::async_write(exchange.stream, asio::buffer(line),
                               asio::redirect_error(use_awaitable, ec));
    if (ec) control->close();
  }
  control->stream = nullptr;
  if (auto it = controls_.find(node_id); it != controls_.end() && it->second == control) {
    controls_.erase(it);
    spdlog::info("node {} closed its tunnel", node_id);
  }
  co_return false;
}

awaitable<bool> TunnelHub::serve_dial_back(std::string node_id, std::string stream_id,
                                           std::string refusal, Exchange& exchange) {
  const auto found = pending_.find(stream_id);
  if (found == pending_.end() || found->second->node_id != node_id) {
    HttpResponse unknown = error_reply(
        Error{ErrorCode::kNotFound, fmt::format("no stream {} waits for this node", stream_id)});
    co_await exchange.answer(std::move(unknown));
    co_return false;
  }
  std::shared_ptr<Pending> pending = found->second;
  pending_.erase(found);
  if (!refusal.empty()) {
    pending->result = fail(ErrorCode::kBadGateway, refusal);
    pending->timer.cancel();
    HttpResponse told = json_reply(200, {{"stream", stream_id}, {"refused", true}});
    co_await exchange.answer(std::move(told));
    co_return false;
  }
  boost::system::error_code ec;
  co_await switch_protocols(exchange, kStreamProtocol, ec);
  if (ec) {
    pending->result = fail(ErrorCode::kBadGateway, "the agent's stream broke off");
    pending->timer.cancel();
    co_return false;
  }
  boost::system::error_code ignored;
  exchange.stream.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
  auto held = std::make_shared<TunnelLease::Held>(&exchange.stream, &exchange.buffer);
  exchange.on_stop = [held] { held->release(); };
  pending->result = TunnelLease(held);
  pending->timer.cancel();
  while (!held->done) {
    co_await held->released.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  co_return false;
}

awaitable<Result<TunnelLease>> TunnelHub::open(std::string node_id, nlohmann::json what) {
  const auto control = controls_.find(node_id);
  if (control == controls_.end()) {
    co_return fail(
        ErrorCode::kBadGateway,
        fmt::format("node {} has no tunnel open to allotd: is its agent running?", node_id));
  }
  const std::string id = new_stream_id(++next_stream_);
  auto pending = std::make_shared<Pending>(node_id, co_await asio::this_coro::executor);
  pending_[id] = pending;
  what["stream"] = id;
  control->second->outbox.push_back(what.dump() + "\n");
  control->second->wake.cancel();
  pending->timer.expires_after(kDialBackTimeout);
  boost::system::error_code ec;
  while (!pending->result) {
    co_await pending->timer.async_wait(asio::redirect_error(use_awaitable, ec));
    if (ec != asio::error::operation_aborted) break;  // The deadline passed.
  }
  pending_.erase(id);
  if (pending->result) co_return std::move(*pending->result);
  co_return fail(ErrorCode::kBadGateway,
                 fmt::format("node {}'s agent did not open the stream in time", node_id));
}

std::optional<TunnelLease> TunnelHub::take_idle(const std::string& key) {
  const auto found = idle_.find(key);
  if (found == idle_.end() || found->second.empty()) return std::nullopt;
  TunnelLease lease = std::move(found->second.back());
  found->second.pop_back();
  if (found->second.empty()) idle_.erase(found);
  return lease;
}

void TunnelHub::keep_idle(const std::string& key, TunnelLease lease) {
  std::vector<TunnelLease>& kept = idle_[key];
  if (kept.size() >= kMaxIdlePerKey) return;  // Dropped: its connection ends.
  kept.push_back(std::move(lease));
}

}  // namespace allot
