#include "core/kernel/slices/cluster.h"

#include <fmt/format.h>

#include "core/kernel/scheduler.h"
#include "core/kernel/slices/find.h"

namespace allot {

RequestShape request_shape(const InstanceSpec& s) {
  return {s.gpus,        s.gpu_milli,        s.gpu_models, s.cpu_milli, s.memory_mib, s.region,
          s.price_class, s.max_price_micros, s.regions,    s.prefer,    s.from};
}

WorkShape work_shape(const InstanceSpec& s) {
  return {s.gpus, s.gpu_milli, s.gpu_models, s.cpu_milli};
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

void add_milli(ModelMilli& into, const std::string& model, int64_t milli) {
  if (milli == 0) return;
  auto [it, added] = into.try_emplace(model, 0);
  it->second += milli;
  if (it->second == 0) into.erase(it);
}

void add_held(ModelMilli& into, const Node& node, const Instance& instance, int sign) {
  if (is_final(instance.state) || instance.state == InstanceState::kQueued) return;
  for (int index : instance.gpu_indices) {
    add_milli(into, node.gpus.at(static_cast<size_t>(index)).model,
              sign * int64_t{instance.milli_per_gpu()});
  }
}

void add_free(ModelMilli& into, const Node& node, int sign) {
  if (!node_takes_work(node)) return;
  for (const Gpu& gpu : node.gpus) {
    if (gpu.healthy) add_milli(into, gpu.model, int64_t{sign} * (1000 - gpu.used_milli));
  }
}

const Node* ClusterSlice::node(const std::string& id) const { return find_by_id(nodes, id); }

const Instance* ClusterSlice::instance(const std::string& id) const {
  return find_by_id(instances, id);
}

void ClusterSlice::count_held(const Instance& instance, int sign) {
  const Node* on = node(instance.node_id);
  if (on == nullptr) return;
  ModelMilli change;
  add_held(change, *on, instance, sign);
  for (auto [index, key] : {std::pair{&held_by_tenant, &instance.tenant_id},
                            std::pair{&held_by_project, &instance.project_id}}) {
    for (const auto& [model, milli] : change) add_milli((*index)[*key], model, milli);
    if (auto it = index->find(*key); it != index->end() && it->second.empty()) index->erase(it);
  }
}

const RegistryCredential* ClusterSlice::registry_credential(const std::string& tenant_id,
                                                            const std::string& host) const {
  return find_by_id(registry_credentials,
                    RegistryCredential{.tenant_id = tenant_id, .host = host}.key());
}

const ImagePull* ClusterSlice::image_pull(const std::string& id) const {
  return find_by_id(image_pulls, id);
}

const Volume* ClusterSlice::volume(const std::string& id) const { return find_by_id(volumes, id); }

const HostedService* ClusterSlice::service(const std::string& id) const {
  return find_by_id(services, id);
}

const Volume* ClusterSlice::volume_named(const std::string& tenant_id,
                                         const std::string& name) const {
  auto it = volume_by_name.find({tenant_id, name});
  return it == volume_by_name.end() ? nullptr : volume(it->second);
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
