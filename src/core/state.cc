#include "core/state.h"

#include <algorithm>

namespace allot {
namespace {

template <typename T>
const T* find(const std::map<std::string, T>& map, const std::string& id) {
  auto it = map.find(id);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

void State::put(const Row& row) {
  std::visit(
      [this](const auto& object) {
        using T = std::decay_t<decltype(object)>;
        if constexpr (std::is_same_v<T, Tenant>) {
          tenants[object.id] = object;
        } else if constexpr (std::is_same_v<T, Project>) {
          projects[object.id] = object;
        } else if constexpr (std::is_same_v<T, User>) {
          users[object.id] = object;
        } else if constexpr (std::is_same_v<T, ApiKey>) {
          keys[object.id] = object;
          key_by_hash[object.token_hash] = object.id;
        } else if constexpr (std::is_same_v<T, JoinToken>) {
          join_tokens[object.id] = object;
        } else if constexpr (std::is_same_v<T, Node>) {
          if (auto old = nodes.find(object.id); old != nodes.end()) {
            node_by_credential.erase(old->second.credential_hash);
          }
          nodes[object.id] = object;
          if (!object.credential_hash.empty())
            node_by_credential[object.credential_hash] = object.id;
          node_by_name[object.name] = object.id;
        } else if constexpr (std::is_same_v<T, Quota>) {
          quotas[object.id] = object;
        } else if constexpr (std::is_same_v<T, Reservation>) {
          reservations[object.id] = object;
        } else if constexpr (std::is_same_v<T, meter::Price>) {
          prices.restore(object);
        } else if constexpr (std::is_same_v<T, ledger::Account> || std::is_same_v<T, LedgerEntry>) {
          // The ledger is changed by Core::apply itself, all of a command's transfers at once.
        } else if constexpr (std::is_same_v<T, Invoice>) {
          put_invoice(object);
        } else if constexpr (std::is_same_v<T, CreditNote>) {
          if (credit_notes.insert_or_assign(object.id, object).second) ++credit_notes_numbered;
        } else if constexpr (std::is_same_v<T, Budget>) {
          budgets[object.id] = object;
        } else if constexpr (std::is_same_v<T, BudgetAlert>) {
          budget_alerts[object.key()] = object;
        } else if constexpr (std::is_same_v<T, Event>) {
          last_event_seq = std::max(last_event_seq, object.seq);
        } else if constexpr (std::is_same_v<T, finance::Asset>) {
          books.assets[object.id] = object;
        } else if constexpr (std::is_same_v<T, Site>) {
          books.sites[object.region] = object;
        } else if constexpr (std::is_same_v<T, FixedCost>) {
          books.fixed_costs[object.id] = object;
        } else if constexpr (std::is_same_v<T, RentalPrice>) {
          books.rental_prices[object.key()] = object;
        } else if constexpr (std::is_same_v<T, NodeEnergy>) {
          books.energy[object.node_id][object.hour_ms] = object.energy_mj;
        } else if constexpr (std::is_same_v<T, Pool>) {
          pools[object.id] = object;
        } else if constexpr (std::is_same_v<T, PoolNode>) {
          pool_nodes[object.id] = object;
        } else if constexpr (std::is_same_v<T, SpotRule>) {
          // A rule without a curve is one that was deleted.
          if (object.curve.empty()) {
            spot_rules.erase(object.key());
          } else {
            spot_rules[object.key()] = object;
          }
        } else if constexpr (std::is_same_v<T, Latency>) {
          if (object.deleted_at_ms != 0) {
            latencies.erase(object.key());
          } else {
            latencies[object.key()] = object;
          }
        } else if constexpr (std::is_same_v<T, RegistryCredential>) {
          if (object.deleted_at_ms != 0) {
            registry_credentials.erase(object.key());
          } else {
            registry_credentials[object.key()] = object;
          }
        } else if constexpr (std::is_same_v<T, ImagePull>) {
          if (object.finished()) {
            open_image_pulls.erase(object.id);
          } else {
            open_image_pulls.insert(object.id);
          }
          image_pulls[object.id] = object;
        } else if constexpr (std::is_same_v<T, Instance>) {
          auto old = instances.find(object.id);
          const bool was_queued =
              old != instances.end() && old->second.state == InstanceState::kQueued;
          const bool is_queued = object.state == InstanceState::kQueued;
          const bool was_active = old != instances.end() && !is_final(old->second.state);
          if (was_active != !is_final(object.state)) {
            size_t& active = active_by_tenant[object.tenant_id];
            active = was_active ? active - 1 : active + 1;
            // No entry rather than a zero: the index is the same however the state was built.
            if (active == 0) active_by_tenant.erase(object.tenant_id);
          }
          instances[object.id] = object;
          if ((object.started_at_ms != 0 || !object.hold_id.empty()) && !object.settled) {
            unsettled_by_tenant[object.tenant_id].insert(object.id);
          } else if (auto held = unsettled_by_tenant.find(object.tenant_id);
                     held != unsettled_by_tenant.end()) {
            held->second.erase(object.id);
            if (held->second.empty()) unsettled_by_tenant.erase(held);
          }
          if (was_queued && !is_queued) queue.erase(object.id);
          if (is_queued && !was_queued) queue.insert(object.id);
        } else {
          static_assert(kNoHandlerFor<T>, "a row type the state cannot hold");
        }
      },
      row);
}

void State::put_invoice(const Invoice& invoice) {
  auto old = invoices.find(invoice.id);
  const bool had_number = old != invoices.end() && !old->second.number.empty();
  if (!had_number && !invoice.number.empty()) ++invoices_numbered;
  invoices[invoice.id] = invoice;
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
