#include "core/kernel/state.h"

#include <algorithm>

namespace allot {
namespace {

template <typename T>
const T* find(const std::map<std::string, T>& map, const std::string& id) {
  auto it = map.find(id);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

void put(State& state, const Event& event) {
  state.last_event_seq = std::max(state.last_event_seq, event.seq);
}

const Tenant* State::tenant(const std::string& id) const { return find(tenants, id); }
const Project* State::project(const std::string& id) const { return find(projects, id); }
const User* State::user(const std::string& id) const { return find(users, id); }
const ApiKey* State::key(const std::string& id) const { return find(keys, id); }
const Node* State::node(const std::string& id) const { return find(nodes, id); }
const Instance* State::instance(const std::string& id) const { return find(instances, id); }
const Quota* State::quota(const std::string& id) const { return find(quotas, id); }
const Reservation* State::reservation(const std::string& id) const {
  return find(reservations, id);
}
const Invoice* State::invoice(const std::string& id) const { return find(invoices, id); }
const Budget* State::budget(const std::string& id) const { return find(budgets, id); }

const Pool* State::pool(const std::string& id) const { return find(pools, id); }

const PoolNode* State::pool_node(const std::string& id) const { return find(pool_nodes, id); }

const RegistryCredential* State::registry_credential(const std::string& tenant_id,
                                                     const std::string& host) const {
  return find(registry_credentials, RegistryCredential{.tenant_id = tenant_id, .host = host}.key());
}

const ImagePull* State::image_pull(const std::string& id) const { return find(image_pulls, id); }

const Latency* State::latency(const std::string& from, const std::string& region) const {
  return find(latencies, Latency{.from = from, .region = region}.key());
}

std::string State::operator_tenant_id() const {
  for (const auto& [id, tenant] : tenants) {
    if (tenant.is_operator) return id;
  }
  return {};
}

const ApiKey* State::key_for_hash(const std::string& token_hash) const {
  auto it = key_by_hash.find(token_hash);
  return it == key_by_hash.end() ? nullptr : key(it->second);
}

const JoinToken* State::join_token_for_hash(const std::string& token_hash) const {
  for (const auto& [id, token] : join_tokens) {
    if (token.token_hash == token_hash) return &token;
  }
  return nullptr;
}

const Node* State::node_for_credential(const std::string& credential_hash) const {
  auto it = node_by_credential.find(credential_hash);
  return it == node_by_credential.end() ? nullptr : node(it->second);
}

}  // namespace allot
