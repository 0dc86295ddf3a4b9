// The core's whole state, as plain data. Ordered maps keep listings and pagination by id stable.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/kernel/row.h"
#include "core/model/books.h"

namespace allot {

struct State {
  std::map<std::string, Tenant> tenants;
  std::map<std::string, Project> projects;
  std::map<std::string, User> users;
  std::map<std::string, ApiKey> keys;
  std::map<std::string, JoinToken> join_tokens;
  std::map<std::string, Node> nodes;
  std::map<std::string, Instance> instances;
  std::map<std::string, Quota> quotas;
  std::map<std::string, Reservation> reservations;
  meter::PriceCatalog prices;
  // Every tenant's money and the operator's (core/money/money.h). Changed by Core::apply only.
  ledger::Ledger ledger;
  std::map<std::string, Invoice> invoices;
  std::map<std::string, CreditNote> credit_notes;
  std::map<std::string, Budget> budgets;
  std::map<std::string, BudgetAlert> budget_alerts;  // By BudgetAlert::key().
  int64_t last_event_seq = 0;  // Events live in the store; the core numbers the next ones.
  // The operator's books: assets, sites, fixed costs, rental prices, energy (core/model/books.h).
  Books books;
  std::map<std::string, Pool> pools;
  std::map<std::string, PoolNode> pool_nodes;
  std::map<std::string, SpotRule> spot_rules;  // By SpotRule::key().
  // Live latency entries by Latency::key(): from, then region.
  std::map<std::string, Latency> latencies;
  // Live registry credentials by RegistryCredential::key(): tenant, then host.
  std::map<std::string, RegistryCredential> registry_credentials;
  std::map<std::string, ImagePull> image_pulls;

  // Derived indexes, kept true by put().
  std::unordered_map<std::string, std::string> key_by_hash;         // key hash -> key id
  std::unordered_map<std::string, std::string> node_by_credential;  // credential hash -> node id
  std::unordered_map<std::string, std::string> node_by_name;
  // Queued instances by id. Placement sorts them its own way (Scheduler::queue_before), so the
  // index keeps no order of arrival that a reload from the store could not give back.
  std::set<std::string> queue;
  // Pulls some node has yet to finish: what heartbeats look through.
  std::set<std::string> open_image_pulls;
  // Instances not yet in a final state, per tenant (for the tenant's limit).
  std::unordered_map<std::string, size_t> active_by_tenant;
  // Instances that ran and whose charge is not all posted yet, per tenant: what money settles.
  std::map<std::string, std::set<std::string>> unsettled_by_tenant;
  // How many invoice and credit-note numbers have been given (each sequence has no gaps).
  int64_t invoices_numbered = 0;
  int64_t credit_notes_numbered = 0;
  // When the controller last took up its state from the store (Core::resume): no node's silence
  // before then counts towards its heartbeat timeout. Not stored; 0 for a core built from scratch.
  TimeMs resumed_at_ms = 0;
  // Any tenant may run on process-runtime nodes (CoreOptions::process_nodes_for_all). Not stored.
  bool process_nodes_for_all = false;

  // Puts one object in place (new or changed), keeping the derived indexes true: the `put`
  // overload of its row type, in its domain (dispatched in core/machine.cc).
  void put(const Row& row);

  const Tenant* tenant(const std::string& id) const;
  const Project* project(const std::string& id) const;
  const User* user(const std::string& id) const;
  const ApiKey* key(const std::string& id) const;
  const ApiKey* key_for_hash(const std::string& token_hash) const;
  const JoinToken* join_token_for_hash(const std::string& token_hash) const;
  const Node* node(const std::string& id) const;
  const Node* node_for_credential(const std::string& credential_hash) const;
  const Instance* instance(const std::string& id) const;
  const Quota* quota(const std::string& id) const;
  const Reservation* reservation(const std::string& id) const;
  const Invoice* invoice(const std::string& id) const;
  const Budget* budget(const std::string& id) const;
  const Pool* pool(const std::string& id) const;
  const PoolNode* pool_node(const std::string& id) const;
  const Latency* latency(const std::string& from, const std::string& region) const;
  const RegistryCredential* registry_credential(const std::string& tenant_id,
                                                const std::string& host) const;
  const ImagePull* image_pull(const std::string& id) const;
  // The operator's tenant id (empty before the bootstrap).
  std::string operator_tenant_id() const;
};

// Keeps the event counter: events themselves stay in the store.
void put(State& state, const Event& event);

}  // namespace allot
