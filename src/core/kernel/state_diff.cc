#include "core/kernel/state_diff.h"

#include <fmt/format.h>

namespace allot::kernel {
namespace {

std::string key_text(const std::string& key) { return key; }
std::string key_text(const meter::PriceKey& key) {
  return fmt::format("{}/{}/{}", key.model, key.region, static_cast<int>(key.price_class));
}
template <typename T>
std::string key_text(const T& key) {
  return fmt::format("{}", key);
}

// The first key whose value differs between the two maps, named after `what`.
template <typename Map>
std::optional<std::string> map_difference(std::string_view what, const Map& a, const Map& b) {
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    if (it == b.end()) return fmt::format("{}: {} only in the first", what, key_text(key));
    if (!(it->second == value)) return fmt::format("{}: {} differs", what, key_text(key));
  }
  for (const auto& [key, value] : b) {
    if (!a.contains(key)) return fmt::format("{}: {} only in the second", what, key_text(key));
  }
  return std::nullopt;
}

template <typename T>
std::optional<std::string> value_difference(std::string_view what, const T& a, const T& b) {
  if (a == b) return std::nullopt;
  return fmt::format("{} differs", what);
}

}  // namespace

std::optional<std::string> first_difference(const State& a, const State& b) {
  const std::optional<std::string> found[] = {
      map_difference("tenants", a.tenants, b.tenants),
      map_difference("projects", a.projects, b.projects),
      map_difference("users", a.users, b.users),
      map_difference("keys", a.keys, b.keys),
      map_difference("join tokens", a.join_tokens, b.join_tokens),
      map_difference("nodes", a.nodes, b.nodes),
      map_difference("instances", a.instances, b.instances),
      map_difference("quotas", a.quotas, b.quotas),
      map_difference("reservations", a.reservations, b.reservations),
      map_difference("prices", a.prices.prices(), b.prices.prices()),
      map_difference("storage prices", a.prices.storage_prices(), b.prices.storage_prices()),
      map_difference("ledger accounts", a.ledger.accounts(), b.ledger.accounts()),
      value_difference("the ledger's transfers", a.ledger.transfers(), b.ledger.transfers()),
      map_difference("invoices", a.invoices, b.invoices),
      map_difference("credit notes", a.credit_notes, b.credit_notes),
      map_difference("budgets", a.budgets, b.budgets),
      map_difference("budget alerts", a.budget_alerts, b.budget_alerts),
      value_difference("the last event number", a.last_event_seq, b.last_event_seq),
      map_difference("assets", a.books.assets, b.books.assets),
      map_difference("sites", a.books.sites, b.books.sites),
      map_difference("fixed costs", a.books.fixed_costs, b.books.fixed_costs),
      map_difference("rental prices", a.books.rental_prices, b.books.rental_prices),
      map_difference("node energy", a.books.energy, b.books.energy),
      map_difference("pools", a.pools, b.pools),
      map_difference("pool nodes", a.pool_nodes, b.pool_nodes),
      map_difference("spot rules", a.spot_rules, b.spot_rules),
      map_difference("latencies", a.latencies, b.latencies),
      map_difference("registry credentials", a.registry_credentials, b.registry_credentials),
      map_difference("volumes", a.volumes, b.volumes),
      map_difference("services", a.services, b.services),
      map_difference("service keys", a.service_keys, b.service_keys),
      map_difference("service usage", a.service_usage, b.service_usage),
      map_difference("image pulls", a.image_pulls, b.image_pulls),
      value_difference("the queue", a.queue, b.queue),
      value_difference("the queue's streams", a.queue_streams, b.queue_streams),
      value_difference("the placed instances", a.placed, b.placed),
      value_difference("the placed spot instances", a.placed_spot, b.placed_spot),
      value_difference("the placed instances by node", a.placed_on, b.placed_on),
      value_difference("the nodes' capacity", a.capacity, b.capacity),
      value_difference("what each tenant's work holds", a.use_by_tenant, b.use_by_tenant),
      value_difference("what each tenant holds per model", a.held_by_tenant, b.held_by_tenant),
      value_difference("what each project holds per model", a.held_by_project, b.held_by_project),
      value_difference("the active instances by shape", a.active_by_shape, b.active_by_shape),
      value_difference("the free GPUs per model", a.free_by_model, b.free_by_model),
      value_difference("the GPUs per model", a.gpus_by_model, b.gpus_by_model),
      value_difference("the open image pulls", a.open_image_pulls, b.open_image_pulls),
      value_difference("the active count per tenant", a.active_by_tenant, b.active_by_tenant),
      value_difference("the volumes' users", a.mounts_by_volume, b.mounts_by_volume),
      value_difference("the unsettled volumes", a.unsettled_volumes, b.unsettled_volumes),
      value_difference("the volumes by name", a.volume_by_name, b.volume_by_name),
      value_difference("the services by name", a.service_by_name, b.service_by_name),
      value_difference("the services' replicas", a.replicas_by_service, b.replicas_by_service),
      value_difference("the service keys by hash", a.service_key_by_hash, b.service_key_by_hash),
      value_difference("the keys by service", a.keys_by_service, b.keys_by_service),
      value_difference("the billed keys", a.billed_keys, b.billed_keys),
      value_difference("the usage by caller", a.usage_by_caller, b.usage_by_caller),
      value_difference("the usage by service", a.usage_by_service, b.usage_by_service),
      value_difference("the launches by key", a.launch_by_key, b.launch_by_key),
      value_difference("the unsettled instances", a.unsettled_by_tenant, b.unsettled_by_tenant),
      value_difference("the invoice numbers given", a.invoices_numbered, b.invoices_numbered),
      value_difference("the credit-note numbers given", a.credit_notes_numbered,
                       b.credit_notes_numbered),
  };
  for (const auto& difference : found) {
    if (difference) return difference;
  }
  return std::nullopt;
}

}  // namespace allot::kernel
