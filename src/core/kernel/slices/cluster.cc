#include "core/kernel/slices/cluster.h"

#include <fmt/format.h>

#include "core/kernel/slices/find.h"

namespace allot {

RequestShape request_shape(const InstanceSpec& s) {
  return {s.gpus,        s.gpu_milli,        s.gpu_models, s.cpu_milli, s.memory_mib, s.region,
          s.price_class, s.max_price_micros, s.regions,    s.prefer,    s.from};
}

int queue_priority(const InstanceSpec& spec) {
  return spec.price_class == PriceClass::kSpot ? 1 : 0;
}

QueueStream QueueStream::of(const Instance& instance) {
  return QueueStream{.priority = queue_priority(instance.spec),
                     .tenant_id = instance.tenant_id,
                     .project_id = instance.project_id,
                     .gang_id = instance.gang_id,
                     .shape = request_shape(instance.spec)};
}

QueueEntry QueueEntry::of(const Instance& instance) {
  return QueueEntry{.created_ms = instance.created_at_ms,
                    .key = instance.gang_id.empty()
                               ? instance.id
                               : fmt::format("{}#{:04}", instance.gang_id, instance.gang_rank),
                    .id = instance.id};
}

Resources Resources::of(const Instance& instance) {
  if (is_final(instance.state) || instance.state == InstanceState::kQueued) return {};
  return Resources{
      .gpu_milli = instance.milli_per_gpu() * static_cast<int64_t>(instance.gpu_indices.size()),
      .cpu_milli = instance.spec.cpu_milli,
      .memory_mib = instance.spec.memory_mib};
}

Resources Resources::capacity_of(const Node& node) {
  return Resources{.gpu_milli = 1000 * static_cast<int64_t>(node.gpus.size()),
                   .cpu_milli = node.cpu_milli,
                   .memory_mib = node.memory_mib};
}

void Resources::add(const Resources& other, int sign) {
  gpu_milli += sign * other.gpu_milli;
  cpu_milli += sign * other.cpu_milli;
  memory_mib += sign * other.memory_mib;
}

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
