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
#include "api/log_store.h"
#include "api/metrics.h"
#include "api/parked.h"
#include "api/read_view.h"
#include "common/clock.h"
#include "common/random.h"
#include "core/core.h"
#include "store/store.h"

namespace allot {

// What one request's work sees while it runs on the core thread.
class Context {
 public:
  // `must_commit` is set once the work writes something that cannot wait for a later batch.
  Context(Core& core, Store& store, LogStore& logs, IdSource& ids, Batch& batch, bool& must_commit,
          int64_t& audit_seq, TimeMs now_ms)
      : core_(core),
        store_(store),
        logs_(logs),
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
  // Writes a piece of an instance's output with this batch, which then commits.
  void add_log(LogPiece piece) {
    must_commit_ = true;
    batch_.logs.push_back(std::move(piece));
  }

  // Parks the request instead of answering it now (long polling): `poll` is asked after every
  // later batch that changes the object `watch` (an id), and once more at `deadline_ms` at the
  // latest. The work's own return is ignored.
  void park(std::string watch, ParkedPoll poll, TimeMs deadline_ms) {
    parked_watch_ = std::move(watch);
    parked_poll_ = std::move(poll);
    parked_deadline_ms_ = deadline_ms;
  }
  bool parked() const { return static_cast<bool>(parked_poll_); }
  // Moves the parked request's watch, poll and deadline into `parked`, giving it `done`.
  void take_parked(ParkedRequests& parked, Responder done) {
    parked.add(std::move(parked_watch_), std::move(parked_poll_), parked_deadline_ms_,
               std::move(done));
  }

  const State& state() const { return core_.state(); }
  Store& store() { return store_; }
  LogStore& logs() { return logs_; }
  IdSource& ids() { return ids_; }
  TimeMs now_ms() const { return now_ms_; }

 private:
  Core& core_;
  Store& store_;
  LogStore& logs_;
  IdSource& ids_;
  Batch& batch_;
  bool& must_commit_;
  int64_t& audit_seq_;
  TimeMs now_ms_;
  std::string parked_watch_;
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

  void loop();
  void run_batch(std::deque<Item>& items);
  // Adds a batch's readings to those that wait, each object's newest row in place of the last.
  void keep_readings(std::vector<Row>& rows);
  // Writes the readings that wait, if any; false if the store failed.
  bool write_readings();
  // Store::commit, timed into the metrics.
  Status commit(const Batch& batch);
  // Answers the parked requests that what changed since the last call made ready, those past
  // their deadline, and with `all` every one.
  void answer_parked(bool all);
  bool reload();
  // The time for the next command: the clock's, but never before the last command's.
  TimeMs command_time();

  Core& core_;
  Store& store_;
  LogStore logs_;  // Core thread only.
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
  ParkedRequests parked_;        // Core thread only.
  // Core thread only: the objects changed since parked requests were last asked, and whether
  // anything may have (a reload).
  std::vector<std::string> changed_;
  bool changed_all_ = false;
  Batch readings_;  // Core thread only: heartbeats' readings not yet written.
  // Core thread only: where in readings_ each object's row is, so that a newer one replaces it.
  std::unordered_map<std::string, size_t> reading_at_;
  TimeMs readings_since_ms_ = 0;  // Core thread only: when the oldest of them was taken.
  ReadView view_;                 // Written by the core thread only.
  std::thread thread_;
};

}  // namespace allot
