#include "api/service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "api/reply.h"
#include "common/limits.h"

namespace allot {

Status Context::apply(const Command& command) {
  auto rows = core_.apply(command, now_ms_);
  if (!rows) return std::unexpected(rows.error());
  if (!rows->empty()) must_commit_ = true;
  for (Row& row : *rows) batch_.rows.push_back(std::move(row));
  return {};
}

Status Context::apply_heartbeat(const NodeHeartbeat& beat) {
  const State& state = core_.state();
  const Node* node = state.node(beat.node_id);
  if (node == nullptr) return apply(beat);  // Refused by the core.
  // The node and its work as they were, to tell afterwards what the heartbeat changed.
  const Node node_before = *node;
  std::unordered_map<std::string, Instance> before;
  if (auto placed = state.placed_on.find(beat.node_id); placed != state.placed_on.end()) {
    for (const std::string& id : placed->second) before.emplace(id, *state.instance(id));
  }
  auto rows = core_.apply(beat, now_ms_);
  if (!rows) return std::unexpected(rows.error());
  const bool readings_only = std::ranges::all_of(*rows, [&](const Row& row) {
    if (const Node* after = std::get_if<Node>(&row)) {
      return after->id == node_before.id && only_readings_differ(node_before, *after);
    }
    if (const Instance* after = std::get_if<Instance>(&row)) {
      auto it = before.find(after->id);
      return it != before.end() && only_readings_differ(it->second, *after);
    }
    return std::holds_alternative<NodeEnergy>(row);
  });
  if (!readings_only) must_commit_ = true;
  for (Row& row : *rows) batch_.rows.push_back(std::move(row));
  return {};
}

void Context::audit(AuditEntry entry) {
  must_commit_ = true;
  entry.seq = ++audit_seq_;
  entry.at_ms = now_ms_;
  batch_.audit.push_back(std::move(entry));
}

Service::Service(Core& core, Store& store, IdSource& ids, const Clock& clock, int64_t audit_seq,
                 Metrics* metrics)
    : core_(core),
      store_(store),
      logs_(store),
      ids_(ids),
      clock_(clock),
      metrics_(metrics),
      audit_seq_(audit_seq) {
  view_.reset(core_.state());
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

void Service::release_parked() {
  std::lock_guard lock(mutex_);
  release_parked_ = true;
  wake_.notify_one();
}

void Service::loop() {
  for (;;) {
    std::deque<Item> items;
    bool release = false;
    {
      std::unique_lock lock(mutex_);
      auto ready = [this] {
        return stopping_ || !queue_.empty() || (release_parked_ && !parked_.empty());
      };
      // Parked requests need their deadlines checked even when nothing arrives.
      if (parked_.empty()) {
        wake_.wait(lock, ready);
      } else {
        wake_.wait_for(lock, std::chrono::milliseconds(100), ready);
      }
      release = release_parked_ || stopping_;
      if (queue_.empty() && stopping_) {
        lock.unlock();
        answer_parked(true);
        write_readings();
        return;  // Stopping, and everything queued is answered.
      }
      const size_t take = std::min(queue_.size(), limits::kMaxBatchCommands);
      items.insert(items.end(), std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + static_cast<long>(take)));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(take));
    }
    if (!items.empty()) run_batch(items);
    answer_parked(release);
  }
}

void Service::answer_parked(bool all) {
  const TimeMs now_ms = clock_.now_ms();
  if (all || changed_all_) {
    parked_.answer_all(core_.state(), now_ms, all);
  } else {
    parked_.answer_changed(core_.state(), changed_, now_ms);
  }
  changed_.clear();
  changed_all_ = false;
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
  bool must_commit = false;
  std::vector<HttpResponse> replies;
  replies.reserve(items.size());
  const int64_t first_seq = audit_seq_;
  std::vector<bool> parked(items.size(), false);
  for (size_t i = 0; i < items.size(); ++i) {
    Context context(core_, store_, logs_, ids_, batch, must_commit, audit_seq_, command_time());
    replies.push_back(items[i].work(context));
    if (context.parked()) {
      context.take_parked(parked_, std::move(items[i].done));
      parked[i] = true;
    }
  }
  // What parked requests, those just parked too, may be waiting for.
  std::vector<std::string> changed = changed_ids(batch.rows);
  changed_.insert(changed_.end(), std::make_move_iterator(changed.begin()),
                  std::make_move_iterator(changed.end()));
  // Readings alone wait for a batch that commits anyway, or until they have waited long enough.
  const TimeMs now_ms = clock_.now_ms();
  if (!must_commit && !batch.rows.empty() && readings_.rows.empty()) readings_since_ms_ = now_ms;
  const bool readings_due = (!readings_.rows.empty() || !batch.rows.empty()) &&
                            now_ms - readings_since_ms_ >= limits::kReadingsWriteMs;
  if (!must_commit && !readings_due) {
    view_.update(batch.rows);
    keep_readings(batch.rows);
    for (size_t i = 0; i < items.size(); ++i) {
      if (!parked[i]) items[i].done(std::move(replies[i]));
    }
    return;
  }
  // Older readings first: rows are whole objects, and the last one written wins.
  batch.rows.insert(batch.rows.begin(), std::make_move_iterator(readings_.rows.begin()),
                    std::make_move_iterator(readings_.rows.end()));
  readings_.rows.clear();
  reading_at_.clear();
  if (auto ok = commit(batch); !ok) {
    spdlog::error("msg=\"store commit failed\" error=\"{}\"", ok.error().message);
    audit_seq_ = first_seq;
    {
      std::lock_guard lock(mutex_);
      stale_ = true;
    }
    reload();
    // A replica whose lease has ended says so (its lease thread is finding out too).
    const Error reason = ok.error().code == ErrorCode::kNotLeader
                             ? ok.error()
                             : Error{ErrorCode::kUnavailable, "the store is unavailable; retry"};
    for (HttpResponse& reply : replies) reply = error_reply(reason);
  } else {
    // Durable now: readers may see it, before anyone is told it is done.
    view_.update(batch.rows);
    logs_.committed();
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (!parked[i]) items[i].done(std::move(replies[i]));
  }
}

void Service::keep_readings(std::vector<Row>& rows) {
  for (Row& row : rows) {
    // Readings are nodes, instances and node-hours of energy: one row per object is enough.
    std::string key = std::visit(
        [](const auto& object) -> std::string {
          using T = std::decay_t<decltype(object)>;
          if constexpr (std::is_same_v<T, Node> || std::is_same_v<T, Instance>) {
            return object.id;
          } else if constexpr (std::is_same_v<T, NodeEnergy>) {
            return fmt::format("{}@{}", object.node_id, object.hour_ms);
          } else {
            return {};
          }
        },
        row);
    if (key.empty()) {
      readings_.rows.push_back(std::move(row));
      continue;
    }
    auto [at, added] = reading_at_.try_emplace(std::move(key), readings_.rows.size());
    if (added) {
      readings_.rows.push_back(std::move(row));
    } else {
      readings_.rows[at->second] = std::move(row);
    }
  }
}

bool Service::write_readings() {
  if (readings_.rows.empty()) return true;
  Batch batch;
  batch.rows.swap(readings_.rows);
  reading_at_.clear();
  if (auto ok = commit(batch); !ok) {
    spdlog::error("msg=\"store commit failed\" error=\"{}\"", ok.error().message);
    return false;
  }
  return true;
}

Status Service::commit(const Batch& batch) {
  const auto start = std::chrono::steady_clock::now();
  Status ok = store_.commit(batch);
  if (metrics_ != nullptr) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    metrics_->record_commit(batch.rows.size(), took.count());
  }
  return ok;
}

TimeMs Service::command_time() {
  // A wall clock stepped back (NTP) must not take the core back with it: it would meter negative
  // stretches and order events against their times.
  last_command_ms_ = std::max(last_command_ms_, clock_.now_ms());
  return last_command_ms_;
}

bool Service::reload() {
  auto rows = store_.load();
  auto seq = store_.last_audit_seq();
  auto ledger = store_.load_ledger();
  if (!rows || !seq || !ledger) return false;
  core_.clear();
  logs_.forget();
  readings_.rows.clear();  // Built on the state that is being thrown away.
  reading_at_.clear();
  core_.restore(*rows);
  if (!core_.restore_ledger(std::move(*ledger))) return false;
  // Heartbeats were refused while the store was away: nodes get their whole timeout again.
  core_.resume(command_time());
  view_.reset(core_.state());
  changed_all_ = true;
  audit_seq_ = *seq;
  std::lock_guard lock(mutex_);
  stale_ = false;
  spdlog::warn("msg=\"core reloaded from the store\" objects={}", rows->size());
  return true;
}

}  // namespace allot
