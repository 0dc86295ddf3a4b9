// What reads are answered from, off the core thread. The core thread keeps it: after each batch
// is durable it takes in the objects the batch changed (the same rows the store wrote), and after
// a load it takes in everything. Readers on other threads see it as of the last durable batch:
// every write whose 2xx has been sent, and nothing that is not yet on disk. Each object is kept as
// it was at one version, with its JSON rendered once, by the first read that needs it; a new
// version replaces the entry, so renderings never go stale and are never redone for the same one.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.h"
#include "api/http.h"
#include "core/kernel/state.h"

namespace allot {

// One object at one version, and its JSON text.
template <typename T>
class Shown {
 public:
  explicit Shown(T object) : object_(std::move(object)) {}

  const T& object() const { return object_; }
  // Rendered by the first caller, from whichever thread; later callers share it.
  const std::string& json() const;

 private:
  T object_;
  mutable std::once_flag rendered_;
  mutable std::string json_;
};

using ShownInstance = std::shared_ptr<const Shown<Instance>>;
using ShownNode = std::shared_ptr<const Shown<Node>>;

// Which instances a listing wants; an absent field does not narrow it.
struct InstanceFilter {
  std::optional<std::string> tenant_id;
  std::optional<std::string> project_id;
  std::optional<std::string> node_id;
  std::optional<std::string> state;  // instance_state_name()

  bool admits(const Instance& instance) const;
};

class ReadView {
 public:
  ReadView();
  ~ReadView();
  ReadView(const ReadView&) = delete;
  ReadView& operator=(const ReadView&) = delete;

  // The core thread: everything in `state`, instead of what was kept.
  void reset(const State& state);
  // The core thread: the objects `rows` carry, once they are durable, in the order written.
  void update(const std::vector<Row>& rows);

  // Any thread. The caller of an API key, as authenticate() on the state would find it.
  [[nodiscard]] Result<Caller> authenticate(std::string_view authorization) const;
  // Any thread. The service key whose whole text is `token`, revoked or not; nullopt: none.
  std::optional<ServiceKey> service_key(std::string_view token) const;
  // Null when there is no such object.
  ShownInstance instance(const std::string& id) const;
  ShownNode node(const std::string& id) const;
  // Up to `count` instances that `filter` admits, in id order, from the first id after `after`
  // (from the start when empty). Walks the narrowest index the filter allows: a tenant's, a
  // project's, a node's or a state's instances, not all of them.
  std::vector<ShownInstance> instances(const InstanceFilter& filter, const std::string& after,
                                       size_t count) const;
  // Up to `count` nodes that `admits` passes, in id order, after `after`.
  std::vector<ShownNode> nodes(const std::function<bool(const Node&)>& admits,
                               const std::string& after, size_t count) const;

 private:
  struct Tables;

  mutable std::shared_mutex mutex_;
  std::unique_ptr<Tables> tables_;  // Guarded by mutex_.
};

// The JSON text of objects shown on the wire (to_json, dumped as json_reply dumps).
std::string render_json(const Instance& instance);
std::string render_json(const Node& node);

template <typename T>
const std::string& Shown<T>::json() const {
  std::call_once(rendered_, [this] { json_ = render_json(object_); });
  return json_;
}

// A 200 with one shown object.
template <typename T>
HttpResponse shown_reply(const Shown<T>& shown) {
  return HttpResponse{.status = 200, .body = shown.json()};
}

// {"items": [...], "next_after": ...} of JSON texts, as page_of() answers.
HttpResponse page_reply(std::span<const std::string* const> items, const std::string* next_after);

// A page of shown objects: `items` holds up to `limit`, and one more when there is a next page.
template <typename T>
HttpResponse shown_page(const std::vector<std::shared_ptr<const Shown<T>>>& items, size_t limit) {
  const size_t n = std::min(items.size(), limit);
  std::vector<const std::string*> texts;
  texts.reserve(n);
  for (size_t i = 0; i < n; ++i) texts.push_back(&items[i]->json());
  return page_reply(texts, items.size() > limit ? &items[n - 1]->object().id : nullptr);
}

}  // namespace allot
