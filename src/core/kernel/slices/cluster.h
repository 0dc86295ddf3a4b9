// The cluster's part of the state: join tokens, nodes, instances and the queue, registry
// credentials and image pulls, with the indexes put() keeps true.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "core/model/cluster.h"
#include "core/model/image.h"
#include "core/model/registry.h"

namespace allot {

struct ClusterSlice {
  std::map<std::string, JoinToken> join_tokens;
  std::map<std::string, Node> nodes;
  std::map<std::string, Instance> instances;
  // Live registry credentials by RegistryCredential::key(): tenant, then host.
  std::map<std::string, RegistryCredential> registry_credentials;
  std::map<std::string, ImagePull> image_pulls;

  // Derived indexes, kept true by put().
  std::unordered_map<std::string, std::string> node_by_credential;  // credential hash -> node id
  std::unordered_map<std::string, std::string> node_by_name;
  // Queued instances by id. Placement sorts them its own way (Scheduler::queue_before), so the
  // index keeps no order of arrival that a reload from the store could not give back.
  std::set<std::string> queue;
  // Pulls some node has yet to finish: what heartbeats look through.
  std::set<std::string> open_image_pulls;
  // Instances not yet in a final state, per tenant (for the tenant's limit).
  std::unordered_map<std::string, size_t> active_by_tenant;
  // When the controller last took up its state from the store (Core::resume): no node's silence
  // before then counts towards its heartbeat timeout. Not stored; 0 for a core built from scratch.
  TimeMs resumed_at_ms = 0;
  // Any tenant may run on process-runtime nodes (CoreOptions::process_nodes_for_all). Not stored.
  bool process_nodes_for_all = false;

  const JoinToken* join_token_for_hash(const std::string& token_hash) const;
  const Node* node(const std::string& id) const;
  const Node* node_for_credential(const std::string& credential_hash) const;
  const Instance* instance(const std::string& id) const;
  const RegistryCredential* registry_credential(const std::string& tenant_id,
                                                const std::string& host) const;
  const ImagePull* image_pull(const std::string& id) const;
};

}  // namespace allot
