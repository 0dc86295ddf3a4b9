// The cluster domain's commands: join tokens, nodes and their heartbeats, instances, idle-stop
// policies, tenants' registry credentials and the operator's image pre-pulls.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/type_list.h"
#include "core/model/cluster.h"
#include "core/model/idle_policy.h"
#include "core/model/image.h"
#include "core/model/registry.h"
#include "core/model/service.h"
#include "core/model/volume.h"

namespace allot {

struct CreateJoinToken {
  std::string id;
  std::string name;
  std::string token_hash;
  TimeMs expires_at_ms = 0;
};

struct RevokeJoinToken {
  std::string id;
};

struct GpuReport {
  int index = 0;
  std::string uuid;
  std::string name;
  std::string model;
  int64_t memory_bytes = 0;
  std::string pci_bus_id;
  bool mig_enabled = false;
};

// An agent joins with a join token. A node of the same name whose GPUs have the same UUIDs is the
// same machine coming back: it keeps its id and gets the new credential.
struct JoinNode {
  std::string node_id;  // Used when the node is new.
  std::string join_token_hash;
  std::string credential_hash;
  std::string name;
  std::string address;  // Node::address.
  std::string region;
  std::map<std::string, std::string> labels;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  std::string backend;
  std::string runtime = "container";  // The API reads "process" for agents that do not say.
  std::string agent_version;
  std::vector<GpuReport> gpus;
  std::string gpu_problem;  // Node::gpu_problem, said from the start.
};

// kStarting: on its node but not running its command yet (its image is being pulled).
enum class WorkloadReportState { kRunning, kStarting, kExited, kFailedToStart };

// What the agent's runtime says of one workload.
struct WorkloadReport {
  std::string instance_id;
  WorkloadReportState state = WorkloadReportState::kRunning;
  int exit_code = -1;
  int signal = 0;
  std::string message;
  // Which run of the instance it is (Instance::run): another run's report is stale. -1: not said
  // (an agent from before runs), taken as the instance's current run.
  int run = -1;
};

struct GpuHeartbeat {
  int index = 0;
  GpuTelemetry telemetry;
  // False when the agent could not read the GPU's utilisation: idle stop counts it as busy.
  bool utilization_read = true;
  bool lost = false;
  std::vector<int> xids;
};

// A node's periodic report: telemetry of every GPU and every workload its runtime knows.
struct NodeHeartbeat {
  std::string node_id;
  std::vector<GpuHeartbeat> gpus;
  std::vector<WorkloadReport> workloads;
  std::string gpu_problem;  // Node::gpu_problem; empty: none.
  // The node's image store, sent when it changed: images_reported says whether it was.
  bool images_reported = false;
  std::vector<NodeImage> images;
  ImageStoreUse image_store;
  std::vector<PullReport> pulls;
};

struct SetNodeAdmin {
  std::string node_id;
  NodeAdmin admin = NodeAdmin::kNone;
};

// The node's credential stops working; its agent must join again with a join token.
struct RevokeNodeCredential {
  std::string node_id;
};

// Takes an empty node out of the fleet for good: it takes no work, its credential stops working,
// and it stays in the store for the books, in service until now.
struct DeleteNode {
  std::string node_id;
};

struct CreateInstance {
  std::string id;
  std::string tenant_id;
  std::string project_id;
  std::string user_id;
  InstanceSpec spec;
  // For a gang (spec.nodes > 1): the ids of ranks 1..nodes-1; `id` is rank 0 and names the gang.
  std::vector<std::string> member_ids;
  // The caller's idempotency key, and a digest of what it asked: a second launch with a key the
  // tenant has used is refused (kAlreadyExists), and the API answers it with the first.
  std::string launch_key;
  std::string launch_digest;
};

// Stopping a gang's member stops the whole gang.
struct StopInstance {
  std::string id;
};

// Sets (or, with no policy, clears) the idle-stop policy of a project's instances.
struct SetProjectIdle {
  std::string project_id;
  std::optional<IdlePolicy> policy;
};

using ClusterCommands =
    TypeList<CreateJoinToken, RevokeJoinToken, JoinNode, NodeHeartbeat, SetNodeAdmin,
             RevokeNodeCredential, DeleteNode, CreateInstance, StopInstance, SetProjectIdle,
             SetRegistryCredential, DeleteRegistryCredential, RequestImagePull, CreateVolume,
             DeleteVolume, CreateService, UpdateService, DeleteService, ScaleService,
             RecordServiceRollout, RecordServiceUse, CreateServiceKey, RevokeServiceKey>;
// Services come before instances: a replica names its service.
using ClusterRows = TypeList<JoinToken, Node, RegistryCredential, ImagePull, HostedService,
                             ServiceKey, ServiceUsage, Instance, Volume>;

}  // namespace allot
