#include "core/kernel/draft.h"

#include <cassert>
#include <set>

namespace allot {

namespace {

// The draft's copy of an object, or the base's (looked up only when the draft has none).
template <typename T, typename Original>
const T* find_in(const std::map<std::string, T>& changed, const std::string& id,
                 Original original) {
  if (auto it = changed.find(id); it != changed.end()) return &it->second;
  return original(id);
}

// The draft's copy of an object that exists, made from the base's on first use.
template <typename T, typename Original>
T& copy_in(std::map<std::string, T>& changed, const std::string& id, Original original) {
  if (auto it = changed.find(id); it != changed.end()) return it->second;
  const T* base = original(id);
  assert(base != nullptr);
  return changed.emplace(id, *base).first->second;
}

}  // namespace

const Node* Draft::node(const std::string& id) const {
  return find_in(nodes_, id, [this](const std::string& key) { return base_->node(key); });
}

const Instance* Draft::instance(const std::string& id) const {
  return find_in(instances_, id, [this](const std::string& key) { return base_->instance(key); });
}

const Volume* Draft::volume(const std::string& id) const {
  return find_in(volumes_, id, [this](const std::string& key) { return base_->volume(key); });
}

Node& Draft::edit_node(const std::string& id) {
  return copy_in(nodes_, id, [this](const std::string& key) { return base_->node(key); });
}

Instance& Draft::edit_instance(const std::string& id) {
  return copy_in(instances_, id, [this](const std::string& key) { return base_->instance(key); });
}

Volume& Draft::edit_volume(const std::string& id) {
  return copy_in(volumes_, id, [this](const std::string& key) { return base_->volume(key); });
}

Node& Draft::add_node(Node node) {
  assert(!node.id.empty());
  const std::string id = node.id;
  return nodes_.insert_or_assign(id, std::move(node)).first->second;
}

Instance& Draft::add_instance(Instance instance) {
  assert(!instance.id.empty());
  const std::string id = instance.id;
  return instances_.insert_or_assign(id, std::move(instance)).first->second;
}

std::vector<std::string> Draft::instances_on(const std::string& node_id) const {
  auto placed_here = [&](const Instance& instance) {
    return instance.node_id == node_id && !is_final(instance.state) &&
           instance.state != InstanceState::kQueued;
  };
  // Those the state had, as this draft leaves them, in id order; then those this draft made.
  std::set<std::string> had;
  if (auto it = base_->placed_on.find(node_id); it != base_->placed_on.end()) {
    for (const std::string& id : it->second) {
      if (!instances_.contains(id)) had.insert(id);
    }
  }
  std::vector<std::string> made;
  for (const auto& [id, instance] : instances_) {
    if (!placed_here(instance)) continue;
    if (base_->instances.contains(id)) {
      had.insert(id);
    } else {
      made.push_back(id);
    }
  }
  std::vector<std::string> out(had.begin(), had.end());
  out.insert(out.end(), made.begin(), made.end());
  return out;
}

std::vector<Row> Draft::rows() const {
  std::vector<Row> out;
  out.reserve(nodes_.size() + instances_.size() + volumes_.size() + accounts_.size() +
              transfers_.size() + others_.size());
  for (const auto& [id, node] : nodes_) out.emplace_back(node);
  for (const auto& [id, instance] : instances_) out.emplace_back(instance);
  for (const auto& [id, volume] : volumes_) out.emplace_back(volume);
  for (const ledger::Account& account : accounts_) out.emplace_back(account);
  for (const ledger::Transfer& transfer : transfers_) out.emplace_back(LedgerEntry{0, transfer});
  out.insert(out.end(), others_.begin(), others_.end());
  return out;
}

}  // namespace allot
