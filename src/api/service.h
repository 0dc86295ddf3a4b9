// The sequencer between the network and the core. Requests queue up; one thread takes them in
// batches, runs each against the core, writes the whole batch's changes in one store transaction
// (group commit) and only then answers. No one ever sees a state that is not yet durable, with one
// exception: heartbeats that only bring readings (Context::apply_heartbeat). A batch of nothing
// else is not committed; its rows wait, in order, and are written with the next batch that commits
// or, at the latest, limits::kReadingsWriteMs after the first of them, and when allotd stops. A
// crash loses at most that long of readings, which the nodes' next heartbeats make up.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "api/http.h"
#include "api/metrics.h"
#include "api/read_view.h"
#include "common/clock.h"
#include "common/random.h"
#include "core/core.h"
#include "store/store.h"

namespace allot {

// A parked request's check: given the state after a batch, its answer if it is ready (or if
// `expired`, its answer regardless), else nullopt to keep waiting.
using ParkedPoll = std::function<std::optional<HttpResponse>(const State& state, bool expired)>;

// What one request's work sees while it runs on the core thread.
class Context {
 public:
  // `must_commit` is set once the work writes something that cannot wait for a later batch.
  Context(Core& core, Store& store, IdSource& ids, Batch& batch, bool& must_commit,
          int64_t& audit_seq, TimeMs now_ms)
      : core_(core),
        store_(store),
        ids_(ids),
        batch_(batch),
        must_commit_(must_commit),
        audit_seq_(audit_seq),
        now_ms_(now_ms) {}

  // Applies a command; its changes join this batch's transaction.
  [[nodiscard]] Status apply(const Command& command);
  // Applies a node's heartbeat. When all it changed is readings (only_readings_differ: the time
  // of the heartbeat, GPU telemetry, metered energy), its rows need not be durable before the
  // answer: they join the batch but do not make it commit (see Service).
  [[nodiscard]] Status apply_heartbeat(const NodeHeartbeat& beat);
  // Records an audit entry in this batch; its seq is assigned here.
  void audit(AuditEntry entry);

  // Parks the request instead of answering it now (long polling): after every later batch `poll`
  // is asked, and once more at `deadline_ms` at the latest. The work's own return is ignored.
  void park(ParkedPoll poll, TimeMs deadline_ms) {
    parked_poll_ = std::move(poll);
    parked_deadline_ms_ = deadline_ms;
  }
  bool parked() const { return static_cast<bool>(parked_poll_); }
  ParkedPoll take_parked(TimeMs& deadline_ms) {
    deadline_ms = parked_deadline_ms_;
    return std::move(parked_poll_);
  }

  const State& state() const { return core_.state(); }
  Store& store() { return store_; }
  IdSource& ids() { return ids_; }
  TimeMs now_ms() const { return now_ms_; }

 private:
  Core& core_;
  Store& store_;
  IdSource& ids_;
  Batch& batch_;
  bool& must_commit_;
  int64_t& audit_seq_;
  TimeMs now_ms_;
  ParkedPoll parked_poll_;
  TimeMs parked_deadline_ms_ = 0;
};

class Service {
 public:
  using Work = std::function<HttpResponse(Context&)>;

  // `metrics`, when given, records each store transaction.
  Service(Core& core, Store& store, IdSource& ids, const Clock& clock, int64_t audit_seq,
          Metrics* metrics = nullptr);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  ~Service();

  // Queues work; `done` gets its answer once the batch it ran in is durable. When the queue is
  // full, `done` gets 503 at once.
  void submit(Work work, Responder done);

  // Answers what is queued, then stops the core thread. Later submits get 503.
  void stop();

  // False after a store failure until the core has been reloaded from the store.
  bool ready() const;

  // What reads are answered from on other threads: the state as of the last durable batch.
  const ReadView& view() const { return view_; }

  // Answers every parked request now, and from now on answers new ones at once: the first step of
  // a graceful stop, so that long polls do not hold it up.
  void release_parked();

 private:
  struct Item {
    Work work;
    Responder done;
  };
  struct Parked {
    ParkedPoll poll;
    TimeMs deadline_ms;
    Responder done;
  };

  void loop();
  void run_batch(std::deque<Item>& items);
  // Adds a batch's readings to those that wait, each object's newest row in place of the last.
  void keep_readings(std::vector<Row>& rows);
  // Writes the readings that wait, if any; false if the store failed.
  bool write_readings();
  // Store::commit, timed into the metrics.
  Status commit(const Batch& batch);
  void answer_parked(bool all);
  bool reload();
  // The time for the next command: the clock's, but never before the last command's.
  TimeMs command_time();

  Core& core_;
  Store& store_;
  IdSource& ids_;
  const Clock& clock_;
  Metrics* metrics_;
  int64_t audit_seq_;           // Core thread only.
  TimeMs last_command_ms_ = 0;  // Core thread only.

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> queue_;       // Guarded by mutex_.
  bool stopping_ = false;        // Guarded by mutex_.
  bool stale_ = false;           // Guarded by mutex_: the core may hold changes the store lost.
  bool release_parked_ = false;  // Guarded by mutex_.
  std::vector<Parked> parked_;   // Core thread only.
  Batch readings_;               // Core thread only: heartbeats' readings not yet written.
  // Core thread only: where in readings_ each object's row is, so that a newer one replaces it.
  std::unordered_map<std::string, size_t> reading_at_;
  TimeMs readings_since_ms_ = 0;  // Core thread only: when the oldest of them was taken.
  ReadView view_;                 // Written by the core thread only.
  std::thread thread_;
};

}  // namespace allot
