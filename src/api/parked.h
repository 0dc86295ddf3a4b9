// Requests parked on the core thread (long polls) until an object they watch changes or their
// deadline passes. After a batch only those watching what it changed are asked, and a sorted set
// of deadlines finds the expired ones, so a batch costs what it touched, not every parked request.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/http.h"
#include "common/clock.h"
#include "core/kernel/state.h"

namespace allot {

// A parked request's check: given the state after a batch, its answer if it is ready (or if
// `expired`, its answer regardless), else nullopt to keep waiting.
using ParkedPoll = std::function<std::optional<HttpResponse>(const State& state, bool expired)>;

// Core thread only.
class ParkedRequests {
 public:
  // `watch`: the id of the object whose change may make it ready.
  void add(std::string watch, ParkedPoll poll, TimeMs deadline_ms, Responder done);
  bool empty() const { return parked_.empty(); }
  size_t size() const { return parked_.size(); }

  // Asks those watching any of `changed`, and those whose deadline has passed (as expired), and
  // answers those that are ready.
  void answer_changed(const State& state, const std::vector<std::string>& changed, TimeMs now_ms);
  // Asks every one (after a reload anything may have changed); with `expire`, answers all.
  void answer_all(const State& state, TimeMs now_ms, bool expire);

 private:
  struct Parked {
    std::string watch;
    ParkedPoll poll;
    TimeMs deadline_ms;
    Responder done;
  };

  // Answers and forgets request `id` if its poll gives an answer.
  void ask(uint64_t id, const State& state, bool expired);

  std::unordered_map<uint64_t, Parked> parked_;
  std::unordered_multimap<std::string, uint64_t> watching_;
  std::set<std::pair<TimeMs, uint64_t>> deadlines_;
  uint64_t next_id_ = 0;
};

// The ids of the objects (nodes and instances) among a batch's rows: what parked requests watch.
std::vector<std::string> changed_ids(const std::vector<Row>& rows);

}  // namespace allot
