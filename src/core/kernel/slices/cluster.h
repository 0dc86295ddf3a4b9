// The cluster's part of the state: join tokens, nodes, instances and the queue, registry
// credentials and image pulls, with the indexes put() keeps true.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/model/cluster.h"
#include "core/model/image.h"
#include "core/model/registry.h"
#include "core/model/service.h"
#include "core/model/volume.h"

namespace allot {

// What a request asks of placement and of the rules: two queued instances of one tenant and
// project with the same shape are placed, refused room and held back alike.
using RequestShape = std::tuple<int, int, std::vector<std::string>, int64_t, int64_t, std::string,
                                PriceClass, int64_t, std::vector<std::string>, Prefer, std::string>;
RequestShape request_shape(const InstanceSpec& spec);

// What a request asks of the scheduler's sense of the workload: whole GPUs, GPU milli, models
// and CPU milli.
using WorkShape = std::tuple<int, int, std::vector<std::string>, int64_t>;
WorkShape work_shape(const InstanceSpec& spec);

// On-demand and reserved work 0, spot 1: the first key of the queue's order.
int queue_priority(const InstanceSpec& spec);

// A stream of the queue: the queued instances that wait alike (one priority, tenant, project and
// request shape; a gang's members alone), in arrival order. A placement pass merges the streams'
// heads in the scheduler's order, so its cost does not grow with the queue's length, and one
// refusal by the rules answers a whole stream (core/cluster/queue.cc).
struct QueueStream {
  int priority = 0;
  std::string tenant_id;
  std::string project_id;
  std::string gang_id;
  RequestShape shape;

  auto operator<=>(const QueueStream&) const = default;
  static QueueStream of(const Instance& instance);
};

// One queued instance in its stream: by arrival, then by its key (its id, or its gang's id and
// rank), the order's last tie-break.
struct QueueEntry {
  TimeMs created_ms = 0;
  std::string key;
  std::string id;

  auto operator<=>(const QueueEntry&) const = default;
  static QueueEntry of(const Instance& instance);
};

// GPU milli, CPU milli and memory: what a tenant's placed work holds (the measure of its fair
// share), or what nodes have.
struct Resources {
  int64_t gpu_milli = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  bool operator==(const Resources&) const = default;
  bool empty() const { return gpu_milli == 0 && cpu_milli == 0 && memory_mib == 0; }
  // What `instance` adds: nothing while it is queued or once it has ended.
  static Resources of(const Instance& instance);
  // What `node` has, whatever its state.
  static Resources capacity_of(const Node& node);
  void add(const Resources& other, int sign);
};

// GPU milli per GPU model, with no zero entries.
using ModelMilli = std::map<std::string, int64_t>;
// Adds `sign` times `milli` to `model`'s entry, dropping it at zero.
void add_milli(ModelMilli& into, const std::string& model, int64_t milli);
// What `instance` holds of `node`'s GPUs per model, times `sign`: nothing unless it is placed.
void add_held(ModelMilli& into, const Node& node, const Instance& instance, int sign);
// The free milli of `node`'s healthy GPUs per model, times `sign`, when the node takes work.
void add_free(ModelMilli& into, const Node& node, int sign);

struct ClusterSlice {
  std::map<std::string, JoinToken> join_tokens;
  std::map<std::string, Node> nodes;
  std::map<std::string, Instance> instances;
  // Live registry credentials by RegistryCredential::key(): tenant, then host.
  std::map<std::string, RegistryCredential> registry_credentials;
  std::map<std::string, ImagePull> image_pulls;
  // Every volume by id, deleted ones too (kept so that storage can be billed to their deletion).
  std::map<std::string, Volume> volumes;
  // Every service by id, deleted ones too.
  std::map<std::string, HostedService> services;
  // Services' keys by id, revoked ones too.
  std::map<std::string, ServiceKey> service_keys;
  // Callers' use of shared services, per hour, by id.
  std::map<std::string, ServiceUsage> service_usage;

  // Derived indexes, kept true by put().
  std::unordered_map<std::string, std::string> node_by_credential;  // credential hash -> node id
  std::unordered_map<std::string, std::string> node_by_name;
  // Queued instances by id. Placement sorts them its own way (Scheduler::queue_before), so the
  // index keeps no order of arrival that a reload from the store could not give back.
  std::set<std::string> queue;
  // The same instances as streams (above), each in arrival order.
  std::map<QueueStream, std::set<QueueEntry>> queue_streams;
  // What every node in `nodes` has, summed: the whole of which fair shares are parts.
  Resources capacity;
  // Placed instances (scheduled, starting or running: neither queued nor ended), so that the
  // timer's passes over running work cost what runs, not every instance there ever was.
  std::set<std::string> placed;
  // Of those, the spot instances: where preemption looks for victims.
  std::set<std::string> placed_spot;
  // The same, per node: what a heartbeat or a node's loss looks through. No empty entries.
  std::unordered_map<std::string, std::set<std::string>> placed_on;
  // Per tenant, what its placed work holds (Resources::of summed); no entry rather than nothing.
  std::unordered_map<std::string, Resources> use_by_tenant;
  // What admission weighs quotas and reservations against, per GPU model: what placed work holds
  // per tenant and per project (an instance counts once its node is in `nodes`), the free milli
  // of healthy GPUs on nodes that take work, and the GPUs the nodes have. A node's GPUs keep
  // their models for good, so what an instance holds changes only when the instance does.
  std::unordered_map<std::string, ModelMilli> held_by_tenant;
  std::unordered_map<std::string, ModelMilli> held_by_project;
  ModelMilli free_by_model;
  ModelMilli gpus_by_model;  // Counts, not milli.
  // Instances not yet ended (queued ones too) by WorkShape, in id order: the workload whose
  // typical shapes the scheduler weighs, read without a walk over every instance. No empty sets.
  std::map<WorkShape, std::set<std::string>> active_by_shape;
  // Pulls some node has yet to finish: what heartbeats look through.
  std::set<std::string> open_image_pulls;
  // Instances not yet ended (queued ones too) that mount each volume, by volume id; no empty sets.
  std::map<std::string, std::set<std::string>> mounts_by_volume;
  // Volumes whose storage is not yet all posted (live ones, and deleted ones until it is), by
  // tenant; no empty sets. What the timer's storage billing looks through.
  std::map<std::string, std::set<std::string>> unsettled_volumes;
  // Live volumes' ids by tenant, then name.
  std::map<std::pair<std::string, std::string>, std::string> volume_by_name;
  // Live services' ids by tenant, then name.
  std::map<std::pair<std::string, std::string>, std::string> service_by_name;
  // Replicas not yet ended (queued ones too) by service id; no empty sets.
  std::map<std::string, std::set<std::string>> replicas_by_service;
  // Services' keys by the hash of the key, revoked ones too; each service's keys, revoked ones
  // too; the live keys billed to another tenant (what the proxy learns the callers' money for).
  std::unordered_map<std::string, std::string> service_key_by_hash;
  std::map<std::string, std::set<std::string>> keys_by_service;
  std::set<std::string> billed_keys;
  // Service usage ids by caller and by service; no empty sets.
  std::map<std::string, std::set<std::string>> usage_by_caller;
  std::map<std::string, std::set<std::string>> usage_by_service;
  // Instances launched with an idempotency key, by tenant and key (instances are never removed).
  std::map<std::pair<std::string, std::string>, std::string> launch_by_key;
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
  // Adds (sign 1) or takes away (-1) what `instance` holds on its node to held_by_tenant and
  // held_by_project, when its node is known.
  void count_held(const Instance& instance, int sign);
  const RegistryCredential* registry_credential(const std::string& tenant_id,
                                                const std::string& host) const;
  const ImagePull* image_pull(const std::string& id) const;
  const Volume* volume(const std::string& id) const;
  const HostedService* service(const std::string& id) const;
  // The tenant's live volume of that name.
  const Volume* volume_named(const std::string& tenant_id, const std::string& name) const;
};

}  // namespace allot
