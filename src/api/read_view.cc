#include "api/read_view.h"

#include <map>
#include <set>
#include <unordered_map>

#include "api/reply.h"
#include "api/wire/cluster.h"

namespace allot {

bool InstanceFilter::admits(const Instance& i) const {
  return (!tenant_id || i.tenant_id == *tenant_id) &&
         (!project_id || i.project_id == *project_id) && (!node_id || i.node_id == *node_id) &&
         (!state || instance_state_name(i.state) == *state);
}

using Ids = std::set<std::string, std::less<>>;

// An index of instance ids by one of their fields.
class InstanceIndex {
 public:
  explicit InstanceIndex(std::string Instance::* field) : field_(field) {}
  void add(const Instance& i) { ids_[i.*field_].insert(i.id); }
  void remove(const Instance& i) {
    auto it = ids_.find(i.*field_);
    if (it == ids_.end()) return;
    it->second.erase(i.id);
    if (it->second.empty()) ids_.erase(it);
  }
  // From one version of an instance to the next.
  void move(const Instance& before, const Instance& now) {
    if (before.*field_ == now.*field_) return;
    remove(before);
    add(now);
  }
  // The ids whose field is `value`.
  const Ids& of(const std::string& value) const {
    static const Ids kNone;
    auto it = ids_.find(value);
    return it == ids_.end() ? kNone : it->second;
  }

 private:
  std::string Instance::* field_;
  std::unordered_map<std::string, Ids> ids_;
};

struct ReadView::Tables {
  std::map<std::string, ShownInstance, std::less<>> instances;
  InstanceIndex by_tenant{&Instance::tenant_id};
  InstanceIndex by_project{&Instance::project_id};
  InstanceIndex by_node{&Instance::node_id};
  std::unordered_map<std::string_view, Ids> by_state;  // instance_state_name() views: static.
  std::map<std::string, ShownNode, std::less<>> nodes;
  std::unordered_map<std::string, ApiKey> keys_by_hash;
  std::unordered_map<std::string, User> users;
  std::unordered_map<std::string, ServiceKey> service_keys_by_hash;

  // What authenticate_key() looks keys and users up in.
  const ApiKey* key_for_hash(const std::string& hash) const {
    auto it = keys_by_hash.find(hash);
    return it == keys_by_hash.end() ? nullptr : &it->second;
  }
  const User* user(const std::string& id) const {
    auto it = users.find(id);
    return it == users.end() ? nullptr : &it->second;
  }

  void take(ShownInstance shown) {
    const Instance& now = shown->object();
    auto [it, added] = instances.try_emplace(now.id, shown);
    if (added) {
      by_tenant.add(now);
      by_project.add(now);
      by_node.add(now);
      by_state[instance_state_name(now.state)].insert(now.id);
      return;
    }
    // Most new versions (a heartbeat's metering, say) move no index: only what moved is touched.
    const Instance& before = it->second->object();
    by_tenant.move(before, now);
    by_project.move(before, now);
    by_node.move(before, now);
    if (before.state != now.state) {
      by_state[instance_state_name(before.state)].erase(before.id);
      by_state[instance_state_name(now.state)].insert(now.id);
    }
    it->second = std::move(shown);
  }
  void take(ShownNode shown) {
    const std::string& id = shown->object().id;
    nodes.insert_or_assign(id, std::move(shown));
  }
  void take(ApiKey key) { keys_by_hash.insert_or_assign(key.token_hash, std::move(key)); }
  void take(User user) { users.insert_or_assign(user.id, std::move(user)); }
  void take(ServiceKey key) {
    service_keys_by_hash.insert_or_assign(key.token_hash, std::move(key));
  }
};

namespace {

// What one row becomes in the view, made outside the lock; nothing for rows it does not keep.
using Taken = std::variant<std::monostate, ShownInstance, ShownNode, ApiKey, User, ServiceKey>;

Taken prepare(const Row& row) {
  return std::visit(
      [](const auto& object) -> Taken {
        using T = std::decay_t<decltype(object)>;
        if constexpr (std::is_same_v<T, Instance>) {
          return std::make_shared<const Shown<Instance>>(object);
        } else if constexpr (std::is_same_v<T, Node>) {
          return std::make_shared<const Shown<Node>>(object);
        } else if constexpr (std::is_same_v<T, ApiKey> || std::is_same_v<T, User> ||
                             std::is_same_v<T, ServiceKey>) {
          return object;
        } else {
          return std::monostate{};
        }
      },
      row);
}

}  // namespace

ReadView::ReadView() : tables_(std::make_unique<Tables>()) {}
ReadView::~ReadView() = default;

void ReadView::reset(const State& state) {
  auto fresh = std::make_unique<Tables>();
  for (const auto& [id, instance] : state.instances) {
    fresh->take(std::make_shared<const Shown<Instance>>(instance));
  }
  for (const auto& [id, node] : state.nodes) fresh->take(std::make_shared<const Shown<Node>>(node));
  for (const auto& [id, key] : state.keys) fresh->take(key);
  for (const auto& [id, user] : state.users) fresh->take(user);
  for (const auto& [id, key] : state.service_keys) fresh->take(key);
  std::unique_lock lock(mutex_);
  tables_.swap(fresh);
  lock.unlock();
  // The old tables go here, outside the lock.
}

void ReadView::update(const std::vector<Row>& rows) {
  std::vector<Taken> taken;
  taken.reserve(rows.size());
  for (const Row& row : rows) {
    Taken one = prepare(row);
    if (!std::holds_alternative<std::monostate>(one)) taken.push_back(std::move(one));
  }
  if (taken.empty()) return;
  std::unique_lock lock(mutex_);
  for (Taken& one : taken) {
    std::visit(
        [this](auto& object) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(object)>, std::monostate>) {
            tables_->take(std::move(object));
          }
        },
        one);
  }
}

Result<Caller> ReadView::authenticate(std::string_view authorization) const {
  std::shared_lock lock(mutex_);
  return authenticate_key(*tables_, authorization);
}

std::optional<ServiceKey> ReadView::service_key(std::string_view token) const {
  const std::string hash = sha256_hex(token);
  std::shared_lock lock(mutex_);
  auto it = tables_->service_keys_by_hash.find(hash);
  if (it == tables_->service_keys_by_hash.end()) return std::nullopt;
  return it->second;
}

ShownInstance ReadView::instance(const std::string& id) const {
  std::shared_lock lock(mutex_);
  auto it = tables_->instances.find(id);
  return it == tables_->instances.end() ? nullptr : it->second;
}

ShownNode ReadView::node(const std::string& id) const {
  std::shared_lock lock(mutex_);
  auto it = tables_->nodes.find(id);
  return it == tables_->nodes.end() ? nullptr : it->second;
}

std::vector<ShownInstance> ReadView::instances(const InstanceFilter& filter,
                                               const std::string& after, size_t count) const {
  std::vector<ShownInstance> out;
  std::shared_lock lock(mutex_);
  const Tables& t = *tables_;
  // The smallest set of ids the filter confines the listing to, if any.
  const Ids* narrowest = nullptr;
  auto narrow = [&narrowest](const Ids& ids) {
    if (narrowest == nullptr || ids.size() < narrowest->size()) narrowest = &ids;
  };
  if (filter.tenant_id) narrow(t.by_tenant.of(*filter.tenant_id));
  if (filter.project_id) narrow(t.by_project.of(*filter.project_id));
  if (filter.node_id) narrow(t.by_node.of(*filter.node_id));
  if (filter.state) {
    static const Ids kNone;
    auto it = t.by_state.find(*filter.state);
    narrow(it == t.by_state.end() ? kNone : it->second);
  }
  auto keep = [&](const ShownInstance& shown) {
    if (filter.admits(shown->object())) out.push_back(shown);
    return out.size() < count;
  };
  if (narrowest == nullptr) {
    for (auto it = t.instances.upper_bound(after); it != t.instances.end(); ++it) {
      if (!keep(it->second)) break;
    }
    return out;
  }
  for (auto it = narrowest->upper_bound(after); it != narrowest->end(); ++it) {
    if (!keep(t.instances.find(*it)->second)) break;
  }
  return out;
}

std::vector<ShownNode> ReadView::nodes(const std::function<bool(const Node&)>& admits,
                                       const std::string& after, size_t count) const {
  std::vector<ShownNode> out;
  std::shared_lock lock(mutex_);
  for (auto it = tables_->nodes.upper_bound(after);
       it != tables_->nodes.end() && out.size() < count; ++it) {
    if (admits(it->second->object())) out.push_back(it->second);
  }
  return out;
}

std::string render_json(const Instance& instance) { return json_text(to_json(instance)); }
std::string render_json(const Node& node) { return json_text(to_json(node)); }

HttpResponse page_reply(std::span<const std::string* const> items, const std::string* next_after) {
  size_t size = 64;
  for (const std::string* item : items) size += item->size() + 1;
  std::string body;
  body.reserve(size);
  body += R"({"items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) body += ',';
    body += *items[i];
  }
  body += R"(],"next_after":)";
  body += next_after == nullptr ? "null" : json_text(*next_after);
  body += '}';
  return HttpResponse{.status = 200, .body = std::move(body)};
}

}  // namespace allot
