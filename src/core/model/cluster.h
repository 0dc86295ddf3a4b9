// The cluster objects the core keeps: nodes with their GPUs, join tokens, and instances (GPU work
// that tenants launch), with the instance lifecycle's states.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/price_class.h"
#include "core/model/idle_policy.h"
#include "core/model/image.h"

namespace allot {

struct JoinToken {
  std::string id;  // "jtk_" + 16 hex
  std::string name;
  std::string token_hash;  // SHA-256 of the token; the token is shown once.
  TimeMs created_at_ms = 0;
  TimeMs expires_at_ms = 0;  // 0: never.
  TimeMs revoked_at_ms = 0;

  bool operator==(const JoinToken&) const = default;
};

// The latest telemetry of one GPU, as its agent reported it.
struct GpuTelemetry {
  int utilization_pct = 0;
  int64_t memory_used_bytes = 0;
  int64_t power_mw = 0;
  // Since the agent started, corrected by the agent for driver reloads; the controller takes a
  // lower reading than the last as the agent restarting from zero.
  int64_t energy_mj = 0;
  int temperature_c = 0;
  int64_t ecc_errors = 0;

  bool operator==(const GpuTelemetry&) const = default;
};

// Energy and carbon of one instance within one UTC day, from its GPUs' energy counters.
struct EnergyUse {
  int64_t energy_mj = 0;
  int64_t carbon_ug = 0;  // Micrograms CO2e: kWh x PUE x the grid's intensity.

  bool operator==(const EnergyUse&) const = default;
};

struct Gpu {
  int index = 0;
  std::string uuid;
  std::string name;
  std::string model;  // Catalog name, e.g. "H100-80GB".
  int64_t memory_bytes = 0;
  std::string pci_bus_id;
  bool mig_enabled = false;
  bool healthy = true;  // False after a critical XID or when lost: out of service.
  std::string health_reason;
  int used_milli = 0;  // Allocated: 1000 per whole GPU, or the sum of fractions.
  GpuTelemetry telemetry;

  bool operator==(const Gpu&) const = default;
};

// An operator's hold on a node: cordoned takes no new work; draining also waits for running work
// to end, then the node is empty (and stays cordoned).
enum class NodeAdmin { kNone, kCordoned, kDraining };

// kDeleted: taken out of the fleet for good (by its pool or an operator); kept for the books.
enum class NodeState { kRegistering, kReady, kCordoned, kDraining, kUnhealthy, kLost, kDeleted };

std::string_view node_state_name(NodeState state);
// Every node state's name, in the enum's order.
std::span<const std::string_view> node_state_names();
std::string_view node_admin_name(NodeAdmin admin);
std::optional<NodeAdmin> parse_node_admin(std::string_view name);

struct Node {
  std::string id;    // "nod_" + 16 hex
  std::string name;  // The host's name; unique.
  // Where other nodes reach it (a gang's peers): the agent's --address, else the address its join
  // came from.
  std::string address;
  std::string region;
  std::map<std::string, std::string> labels;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t used_cpu_milli = 0;  // Held by the node's instances.
  int64_t used_memory_mib = 0;
  std::string backend;  // "nvml" or "simulated".
  // "container" (isolated OCI containers) or "process" (work runs on the host: trusted nodes).
  std::string runtime = "process";
  std::string agent_version;
  std::string credential_hash;  // SHA-256 of the node's credential.
  NodeAdmin admin = NodeAdmin::kNone;
  bool lost = false;
  TimeMs joined_at_ms = 0;
  TimeMs last_heartbeat_ms = 0;  // 0 until the first heartbeat: the node is registering.
  TimeMs deleted_at_ms = 0;      // 0 while in the fleet; its service ends here.
  std::vector<Gpu> gpus;
  int64_t generation = 0;  // Bumped whenever the work the node should run changes.
  // Why the node's GPUs cannot be given to isolated work (a container node without the NVIDIA
  // CDI spec), as its agent says; while set, its GPUs are out of service with this reason.
  std::string gpu_problem;
  // Its image store, as its agent last reported it (container nodes only).
  std::vector<NodeImage> images;
  ImageStoreUse image_store;
  TimeMs images_at_ms = 0;  // When it was reported; 0: never.

  bool operator==(const Node&) const = default;
  NodeState state() const;
};

enum class InstanceState {
  kQueued,
  kScheduled,
  kStarting,
  kRunning,
  kSucceeded,
  kFailed,
  kStopped,
  kPreempted,
  kLost,
};

std::string_view instance_state_name(InstanceState state);
// Every instance state's name, in the enum's order.
std::span<const std::string_view> instance_state_names();
bool is_final(InstanceState state);

// What a request prefers when several regions could take it: the cheapest, the cleanest grid, or
// the shortest round trip from a client location (core/admission/quote.h ranks regions so).
enum class Prefer { kNone, kPrice, kCarbon, kLatency };

std::string_view prefer_name(Prefer prefer);
std::optional<Prefer> parse_prefer(std::string_view name);

// A volume an instance mounts (core/model/volume.h).
struct VolumeMount {
  std::string volume_id;
  std::string name;  // The volume's name when the launch named it.
  std::string path;  // Where it appears inside the instance: absolute, normalised.
  bool read_only = false;

  bool operator==(const VolumeMount&) const = default;
};

// A port of the instance that allotd serves at /i/INSTANCE/PORT/ (docs/api.md, "Published
// ports"), through the tunnel its node's agent keeps open to allotd.
struct PublishedPort {
  int port = 0;                   // 1..65535, inside the instance.
  std::string protocol = "http";  // What the instance speaks on it: "http" or "https".
  bool is_public = false;         // Reachable without a key or a signed link.

  bool operator==(const PublishedPort&) const = default;
};

struct InstanceSpec {
  int gpus = 0;                         // Whole GPUs, 1..8; 0 when gpu_milli is set.
  int gpu_milli = 0;                    // A fraction of one GPU, 1..999; 0 when gpus is set.
  std::vector<std::string> gpu_models;  // Allowed models or families; empty: any.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  std::string region;  // Empty: any.
  PriceClass price_class = PriceClass::kOnDemand;
  // The OCI image the command runs in on container nodes; empty: the operator's default_image.
  std::string image;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> labels;
  int64_t max_run_s = 0;     // 0: no limit.
  bool interactive = false;  // Runs until stopped; a job runs to completion.
  bool requeue = false;      // When preempted, go back to the queue instead of ending.
  int nodes = 1;             // A gang: this many members, one per node, started all at once.
  // The most it pays per GPU-hour of its price class, in micro-units; 0: any price. It is never
  // placed on a node whose price is above it; spot work is also preempted at the second the spot
  // price passes it.
  int64_t max_price_micros = 0;
  // Where it may run and which region it prefers (core/admission/quote.h). `regions` is a hard
  // limit (data residency; empty: any); `prefer` only orders the regions that qualify; `from` is
  // the client location that latency is measured from.
  std::vector<std::string> regions;
  Prefer prefer = Prefer::kNone;
  std::string from;
  // Idle stop for this instance, over its project's; none: the project's applies, if any.
  std::optional<IdlePolicy> idle;
  // The operator's launch template it was made from (api/launch.h); empty: none. Set by allotd
  // from the request's `template`, never read from a request.
  std::string from_template;
  // Volumes it mounts; they go with it when preemption requeues it.
  std::vector<VolumeMount> volumes;
  std::vector<PublishedPort> ports;
  // The service (core/model/service.h) it is a replica of, and of which revision; set by allotd's
  // service controller, never read from a request. Empty: none.
  std::string service_id;
  int service_revision = 0;

  bool operator==(const InstanceSpec&) const = default;
};

struct InstanceEvent {
  TimeMs at_ms = 0;
  std::string state;  // The state entered, or empty for an event that changes no state.
  std::string message;

  bool operator==(const InstanceEvent&) const = default;
};

struct Instance {
  std::string id;  // "ins_" + 16 hex
  std::string tenant_id;
  std::string project_id;
  std::string user_id;
  InstanceSpec spec;
  InstanceState state = InstanceState::kQueued;
  std::string reason;  // Why it is in its state (waiting, failed, lost...).
  std::string node_id;
  // The node of its last run, kept when preemption sends it back to the queue (and clears
  // node_id), so that what that run still writes reaches its log.
  std::string last_node_id;
  // Its runs so far less one: 0 for the first, one more each time preemption requeues it. The
  // agent is told it with the work and reports it back, so that a run in its grace on a node is
  // never taken for the next run of the same instance there.
  int run = 0;
  std::vector<int> gpu_indices;
  std::vector<std::string> gpu_uuids;
  bool stop_requested = false;
  std::string stop_reason;  // Why it was asked to stop; part of its final reason once it ends.
  int exit_code = -1;
  TimeMs created_at_ms = 0;
  TimeMs started_at_ms = 0;  // Entered running.
  TimeMs ended_at_ms = 0;    // Entered a final state: the last moment it was known to run.
  std::vector<InstanceEvent> events;
  // A member of a gang (spec.nodes > 1): the gang is named by its rank-0 member's id.
  std::string gang_id;
  int gang_rank = 0;
  // The first of the limits::kGangPortsPerMember ports a gang member publishes on its node for its
  // peers (the same numbers inside its container); 0: none.
  int gang_port = 0;
  // Money (see core/money/money.h): what has been posted to the ledger for its usage so far, up to
  // when, how many postings that took, and the hold it has on its tenant's balance.
  int64_t billed_micros = 0;
  TimeMs billed_to_ms = 0;
  int64_t postings = 0;
  std::string hold_id;  // The pending transfer holding its runway; empty: none.
  int64_t hold_micros = 0;
  bool settled = false;  // Ended, and its whole charge posted.
  // Billing ends here even though the work ran on: its tenant's money ran out first and the timer
  // found it only after the work had ended. 0: none.
  TimeMs billing_cap_ms = 0;
  // Energy and carbon while it ran, per UTC day (by the day's first moment), so that invoices
  // (months) and usage reports (days and windows of days) can both be cut from it.
  std::map<TimeMs, EnergyUse> energy;
  // Idle stop (core/cluster/idle.h): since when every one of its GPUs has read under its policy's
  // threshold without a break (0: not idle, or no policy), and whether its owner has been told of
  // this stretch.
  TimeMs idle_since_ms = 0;
  bool idle_notified = false;
  // The Idempotency-Key it was launched with (rank 0 of a gang only), and a digest of the launch's
  // body; empty: none.
  std::string launch_key;
  std::string launch_digest;
  // The sum over the days that start in [from_ms, to_ms).
  EnergyUse energy_between(TimeMs from_ms, TimeMs to_ms) const;

  bool operator==(const Instance&) const = default;
  // GPU milli this instance holds on each of its GPUs.
  int milli_per_gpu() const { return spec.gpus > 0 ? 1000 : spec.gpu_milli; }
};

// Whether a new version of a node or instance differs from the one before only in readings: for a
// node, the time of its last heartbeat and its GPUs' telemetry; for an instance, the energy
// metered to it. A heartbeat that changes nothing else may be written later (api/service.h):
// lost in a crash, it is made up by the next heartbeat, since energy counters only grow.
bool only_readings_differ(const Node& before, const Node& after);
bool only_readings_differ(const Instance& before, const Instance& after);

}  // namespace allot
