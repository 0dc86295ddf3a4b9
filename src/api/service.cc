#include "api/service.h"

#include <spdlog/spdlog.h>

#include "api/reply.h"
#include "common/limits.h"

namespace allot {

Status Context::apply(const Command& command) {
  auto rows = core_.apply(command, now_ms_);
  if (!rows) return std::unexpected(rows.error());
  for (Row& row : *rows) batch_.rows.push_back(std::move(row));
  return {};
}

void Context::audit(AuditEntry entry) {
  entry.seq = ++audit_seq_;
  entry.at_ms = now_ms_;
  batch_.audit.push_back(std::move(entry));
}

Service::Service(Core& core, Store& store, IdSource& ids, const Clock& clock, int64_t audit_seq)
    : core_(core), store_(store), ids_(ids), clock_(clock), audit_seq_(audit_seq) {
  thread_ = std::thread([this] { loop(); });
}

Service::~Service() { stop(); }

void Service::submit(Work work, Responder done) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() < limits::kMaxQueuedRequests) {
      queue_.push_back(Item{std::move(work), std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(error_reply(Error{ErrorCode::kUnavailable, "the controller is busy or stopping"}));
}

void Service::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

bool Service::ready() const {
  std::lock_guard lock(mutex_);
  return !stale_ && !stopping_;
}

void Service::loop() {
  for (;;) {
    std::deque<Item> items;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping, and everything queued is answered.
      const size_t take = std::min(queue_.size(), limits::kMaxBatchCommands);
      items.insert(items.end(), std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + static_cast<long>(take)));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(take));
    }
    run_batch(items);
  }
}

void Service::run_batch(std::deque<Item>& items) {
  bool stale = false;
  {
    std::lock_guard lock(mutex_);
    stale = stale_;
  }
  if (stale && !reload()) {
    for (Item& item : items) {
      item.done(error_reply(Error{ErrorCode::kUnavailable, "the store is unavailable"}));
    }
    return;
  }
  Batch batch;
  std::vector<HttpResponse> replies;
  replies.reserve(items.size());
  const int64_t first_seq = audit_seq_;
  for (Item& item : items) {
    Context context(core_, store_, ids_, batch, audit_seq_, clock_.now_ms());
    replies.push_back(item.work(context));
  }
  if (auto ok = store_.commit(batch); !ok) {
    spdlog::error("msg=\"store commit failed\" error=\"{}\"", ok.error().message);
    audit_seq_ = first_seq;
    {
      std::lock_guard lock(mutex_);
      stale_ = true;
    }
    reload();
    for (HttpResponse& reply : replies) {
      reply = error_reply(Error{ErrorCode::kUnavailable, "the store is unavailable; retry"});
    }
  }
  for (size_t i = 0; i < items.size(); ++i) items[i].done(std::move(replies[i]));
}

bool Service::reload() {
  auto rows = store_.load();
  auto seq = store_.last_audit_seq();
  if (!rows || !seq) return false;
  core_ = Core{};
  core_.restore(*rows);
  audit_seq_ = *seq;
  std::lock_guard lock(mutex_);
  stale_ = false;
  spdlog::warn("msg=\"core reloaded from the store\" objects={}", rows->size());
  return true;
}

}  // namespace allot
