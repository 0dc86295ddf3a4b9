// The sequencer between the network and the core. Requests queue up; one thread takes them in
// batches, runs each against the core, writes the whole batch's changes in one store transaction
// (group commit) and only then answers. No one ever sees a state that is not yet durable.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "api/http.h"
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
  Context(Core& core, Store& store, IdSource& ids, Batch& batch, int64_t& audit_seq, TimeMs now_ms)
      : core_(core),
        store_(store),
        ids_(ids),
        batch_(batch),
        audit_seq_(audit_seq),
        now_ms_(now_ms) {}

  // Applies a command; its changes join this batch's transaction.
  [[nodiscard]] Status apply(const Command& command);
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
  int64_t& audit_seq_;
  TimeMs now_ms_;
  ParkedPoll parked_poll_;
  TimeMs parked_deadline_ms_ = 0;
};

class Service {
 public:
  using Work = std::function<HttpResponse(Context&)>;

  Service(Core& core, Store& store, IdSource& ids, const Clock& clock, int64_t audit_seq);
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
  void answer_parked(bool all);
  bool reload();
  // The time for the next command: the clock's, but never before the last command's.
  TimeMs command_time();

  Core& core_;
  Store& store_;
  IdSource& ids_;
  const Clock& clock_;
  int64_t audit_seq_;           // Core thread only.
  TimeMs last_command_ms_ = 0;  // Core thread only.

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> queue_;       // Guarded by mutex_.
  bool stopping_ = false;        // Guarded by mutex_.
  bool stale_ = false;           // Guarded by mutex_: the core may hold changes the store lost.
  bool release_parked_ = false;  // Guarded by mutex_.
  std::vector<Parked> parked_;   // Core thread only.
  ReadView view_;                // Written by the core thread only.
  std::thread thread_;
};

}  // namespace allot
