#include "api/parked.h"

namespace allot {

void ParkedRequests::add(std::string watch, ParkedPoll poll, TimeMs deadline_ms, Responder done) {
  const uint64_t id = next_id_++;
  watching_.emplace(watch, id);
  deadlines_.emplace(deadline_ms, id);
  parked_.emplace(id, Parked{.watch = std::move(watch),
                             .poll = std::move(poll),
                             .deadline_ms = deadline_ms,
                             .done = std::move(done)});
}

void ParkedRequests::ask(uint64_t id, const State& state, bool expired) {
  auto it = parked_.find(id);
  if (it == parked_.end()) return;
  std::optional<HttpResponse> answer = it->second.poll(state, expired);
  if (!answer) return;
  Parked parked = std::move(it->second);
  parked_.erase(it);
  deadlines_.erase({parked.deadline_ms, id});
  auto [first, last] = watching_.equal_range(parked.watch);
  for (auto w = first; w != last; ++w) {
    if (w->second == id) {
      watching_.erase(w);
      break;
    }
  }
  parked.done(std::move(*answer));
}

void ParkedRequests::answer_changed(const State& state, const std::vector<std::string>& changed,
                                    TimeMs now_ms) {
  std::vector<uint64_t> asked;
  for (const std::string& watch : changed) {
    auto [first, last] = watching_.equal_range(watch);
    for (auto w = first; w != last; ++w) asked.push_back(w->second);
  }
  for (uint64_t id : asked) ask(id, state, false);
  asked.clear();
  for (auto d = deadlines_.begin(); d != deadlines_.end() && d->first <= now_ms; ++d) {
    asked.push_back(d->second);
  }
  for (uint64_t id : asked) ask(id, state, true);
}

void ParkedRequests::answer_all(const State& state, TimeMs now_ms, bool expire) {
  std::vector<std::pair<uint64_t, bool>> asked;
  asked.reserve(parked_.size());
  for (const auto& [id, parked] : parked_) {
    asked.emplace_back(id, expire || parked.deadline_ms <= now_ms);
  }
  for (const auto& [id, expired] : asked) ask(id, state, expired);
}

std::vector<std::string> changed_ids(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& row : rows) {
    if (const auto* node = std::get_if<Node>(&row)) out.push_back(node->id);
    if (const auto* instance = std::get_if<Instance>(&row)) out.push_back(instance->id);
  }
  return out;
}

}  // namespace allot
