#include "core/kernel/slices/cluster.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Node* ClusterSlice::node(const std::string& id) const { return find_by_id(nodes, id); }

const Instance* ClusterSlice::instance(const std::string& id) const {
  return find_by_id(instances, id);
}

const RegistryCredential* ClusterSlice::registry_credential(const std::string& tenant_id,
                                                            const std::string& host) const {
  return find_by_id(registry_credentials,
                    RegistryCredential{.tenant_id = tenant_id, .host = host}.key());
}

const ImagePull* ClusterSlice::image_pull(const std::string& id) const {
  return find_by_id(image_pulls, id);
}

const JoinToken* ClusterSlice::join_token_for_hash(const std::string& token_hash) const {
  for (const auto& [id, token] : join_tokens) {
    if (token.token_hash == token_hash) return &token;
  }
  return nullptr;
}

const Node* ClusterSlice::node_for_credential(const std::string& credential_hash) const {
  auto it = node_by_credential.find(credential_hash);
  return it == node_by_credential.end() ? nullptr : node(it->second);
}

}  // namespace allot
