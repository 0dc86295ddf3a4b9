// Nodes: join tokens, joining, heartbeats with telemetry and health, cordon and drain, and the
// timer that declares silent nodes lost.
#include <algorithm>
#include <cassert>
#include <set>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/books/books.h"
#include "core/cluster/cluster.h"
#include "core/cluster/idle.h"
#include "core/cluster/image_pulls.h"
#include "core/kernel/lookups.h"
#include "core/kernel/slices/find.h"
#include "core/kernel/validate.h"
#include "core/money/budgets.h"
#include "core/money/money.h"
#include "core/pools/pools.h"
#include "core/pools/spot_rules.h"

namespace allot {
namespace {

Status node_exists(const State& state, const std::string& id) {
  if (state.node(id) == nullptr) return std::unexpected(not_found("node", id));
  return {};
}

Error unknown_token() {
  return Error{ErrorCode::kUnauthenticated, "unknown or revoked join token"};
}

Status check_inventory(const JoinNode& c) {
  if (auto ok = check_name("node name", c.name); !ok) return ok;
  if (auto ok = check_name("region", c.region); !ok) return ok;
  if (c.gpus.size() > limits::kMaxGpusPerNode) {
    return fail(ErrorCode::kLimitExceeded, "a node reports at most 16 GPUs");
  }
  std::set<std::string> uuids;
  for (size_t i = 0; i < c.gpus.size(); ++i) {
    if (c.gpus[i].index != static_cast<int>(i)) {
      return fail(ErrorCode::kInvalidArgument, "GPUs must be listed by index from 0");
    }
    if (c.gpus[i].uuid.empty() || !uuids.insert(c.gpus[i].uuid).second) {
      return fail(ErrorCode::kInvalidArgument, "every GPU needs its own UUID");
    }
  }
  if (c.cpu_milli < 0 || c.memory_mib < 0) {
    return fail(ErrorCode::kInvalidArgument, "cpu and memory must be >= 0");
  }
  return {};
}

std::set<std::string> uuids_of(const std::vector<Gpu>& gpus) {
  std::set<std::string> out;
  for (const Gpu& gpu : gpus) out.insert(gpu.uuid);
  return out;
}

// Marks a GPU out of service and fails the instances on it.
void take_gpu_out(Draft& draft, Node& node, Gpu& gpu, const std::string& why, TimeMs now_ms) {
  if (!gpu.healthy) return;
  gpu.healthy = false;
  gpu.health_reason = why;
  const std::string node_id = node.id;
  const int index = gpu.index;
  for (const std::string& id : draft.instances_on(node_id)) {
    const Instance* instance = draft.instance(id);
    if (std::find(instance->gpu_indices.begin(), instance->gpu_indices.end(), index) !=
        instance->gpu_indices.end()) {
      end_instance(draft, id, InstanceState::kFailed, now_ms,
                   fmt::format("GPU {} failed: {}", index, why));
    }
  }
}

// A problem the agent reports takes every GPU out of service with it as the reason; once the
// agent no longer reports it, the GPUs it took out (and only those) return to service.
void set_gpu_problem(Draft& draft, const std::string& node_id, const std::string& problem,
                     TimeMs now_ms) {
  const Node& was = *draft.node(node_id);
  if (was.gpu_problem == problem) return;
  Node& node = draft.edit_node(node_id);
  const std::string before = node.gpu_problem;
  node.gpu_problem = problem;
  for (Gpu& gpu : node.gpus) {
    if (!before.empty() && !gpu.healthy && gpu.health_reason == before) {
      gpu.healthy = true;
      gpu.health_reason.clear();
    }
    if (!problem.empty()) take_gpu_out(draft, node, gpu, problem, now_ms);
  }
}

void apply_report(Draft& draft, const Node& node, const WorkloadReport& report, TimeMs now_ms) {
  const Instance* instance = draft.instance(report.instance_id);
  if (instance == nullptr || instance->node_id != node.id || is_final(instance->state)) return;
  // An earlier run, ending in its grace: not this one.
  if (report.run >= 0 && report.run != instance->run) return;
  switch (report.state) {
    case WorkloadReportState::kRunning:
      if (instance->state != InstanceState::kRunning) {
        transition(draft.edit_instance(instance->id), InstanceState::kRunning, now_ms,
                   "the workload is running");
      }
      return;
    case WorkloadReportState::kStarting:
      // What it is doing ("pulling the image"), once per change: no row per heartbeat.
      if (instance->state != InstanceState::kRunning && !report.message.empty() &&
          instance->reason != report.message) {
        Instance& starting = draft.edit_instance(instance->id);
        starting.reason = report.message;
        starting.events.push_back(InstanceEvent{.at_ms = now_ms, .message = report.message});
      }
      return;
    case WorkloadReportState::kFailedToStart:
      end_instance(draft, instance->id, InstanceState::kFailed, now_ms,
                   "failed to start: " + report.message);
      return;
    case WorkloadReportState::kExited: {
      const std::string how = report.signal != 0
                                  ? fmt::format("killed by signal {}", report.signal)
                                  : fmt::format("exited with code {}", report.exit_code);
      if (instance->state != InstanceState::kRunning) {
        // It ran and ended between two reports: it is known to have run from now.
        transition(draft.edit_instance(instance->id), InstanceState::kRunning, now_ms,
                   "the workload ran and ended between two reports");
      }
      InstanceState to = report.exit_code == 0 ? InstanceState::kSucceeded : InstanceState::kFailed;
      if (instance->stop_requested) to = InstanceState::kStopped;
      // A stopped instance's final reason says why it was stopped, then how it ended.
      const std::string why = instance->stop_requested && !instance->stop_reason.empty()
                                  ? fmt::format("{} ({})", instance->stop_reason, how)
                                  : how;
      Instance& ended = draft.edit_instance(instance->id);
      ended.exit_code = report.exit_code;
      end_instance(draft, instance->id, to, now_ms, why);
      return;
    }
  }
}

}  // namespace

Result<Rows> apply(const State& state, const CreateJoinToken& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "jtk"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (c.token_hash.size() != 64 || state.join_token_for_hash(c.token_hash) != nullptr) {
    return fail(ErrorCode::kInvalidArgument, "bad or reused join token hash");
  }
  if (c.expires_at_ms != 0 && c.expires_at_ms <= now_ms) {
    return fail(ErrorCode::kInvalidArgument, "the expiry must be in the future");
  }
  return Rows{JoinToken{.id = c.id,
                        .name = c.name,
                        .token_hash = c.token_hash,
                        .created_at_ms = now_ms,
                        .expires_at_ms = c.expires_at_ms}};
}

Result<Rows> apply(const State& state, const RevokeJoinToken& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return set_once(find_by_id(state.join_tokens, c.id), &JoinToken::revoked_at_ms, "join token",
                  c.id, now_ms);
}

Result<Rows> apply(const State& state, const JoinNode& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const JoinToken* token = state.join_token_for_hash(c.join_token_hash);
  if (token == nullptr || token->revoked_at_ms != 0 ||
      (token->expires_at_ms != 0 && token->expires_at_ms <= now_ms)) {
    return std::unexpected(unknown_token());
  }
  if (auto ok = check_inventory(c); !ok) return std::unexpected(ok.error());
  std::vector<Gpu> gpus;
  gpus.reserve(c.gpus.size());
  for (const GpuReport& g : c.gpus) {
    gpus.push_back(Gpu{.index = g.index,
                       .uuid = g.uuid,
                       .name = g.name,
                       .model = g.model,
                       .memory_bytes = g.memory_bytes,
                       .pci_bus_id = g.pci_bus_id,
                       .mig_enabled = g.mig_enabled,
                       .healthy = c.gpu_problem.empty(),
                       .health_reason = c.gpu_problem});
  }
  Draft draft(state);
  if (auto named = state.node_by_name.find(c.name); named != state.node_by_name.end()) {
    const Node& existing = *state.node(named->second);
    if (existing.deleted_at_ms != 0) {
      // Its history stays under its name: the machine joins again under a new one.
      return fail(ErrorCode::kAlreadyExists,
                  fmt::format("the deleted node {} keeps that name; join under another", c.name));
    }
    if (uuids_of(existing.gpus) != uuids_of(gpus)) {
      return fail(ErrorCode::kAlreadyExists,
                  fmt::format("a node named {} with other GPUs exists", c.name));
    }
    // The same machine again (its agent lost its credential): it keeps its id, GPUs and work.
    Node& node = draft.edit_node(existing.id);
    node.credential_hash = c.credential_hash;
    node.agent_version = c.agent_version;
    node.labels = c.labels;
    node.address = c.address;
    return draft.rows();
  }
  if (auto ok = check_id("node id", c.node_id, "nod"); !ok) return std::unexpected(ok.error());
  Node& joined = draft.add_node(Node{.id = c.node_id,
                                     .name = c.name,
                                     .address = c.address,
                                     .region = c.region,
                                     .labels = c.labels,
                                     .cpu_milli = c.cpu_milli,
                                     .memory_mib = c.memory_mib,
                                     .backend = c.backend,
                                     .runtime = c.runtime,
                                     .agent_version = c.agent_version,
                                     .credential_hash = c.credential_hash,
                                     .joined_at_ms = now_ms,
                                     .gpus = std::move(gpus),
                                     .gpu_problem = c.gpu_problem});
  join_pool(draft, *token, joined, now_ms);
  return draft.rows();
}

Result<Rows> apply(const State& state, const NodeHeartbeat& c, TimeMs now_ms,
                   const Placing& placing) {
  if (auto found = node_exists(state, c.node_id); !found) return std::unexpected(found.error());
  const Node& was = *state.node(c.node_id);
  if (was.deleted_at_ms != 0) {
    return fail(ErrorCode::kUnauthenticated, fmt::format("node {} was deleted", was.name));
  }
  Draft draft(state);
  const bool came_back = was.lost || was.last_heartbeat_ms == 0;
  meter_energy(draft, c, now_ms);  // Before the readings replace the last ones.
  Node& node = draft.edit_node(c.node_id);
  node.lost = false;
  node.last_heartbeat_ms = now_ms;
  for (const GpuHeartbeat& beat : c.gpus) {
    if (beat.index < 0 || static_cast<size_t>(beat.index) >= node.gpus.size()) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("no GPU {} on this node", beat.index));
    }
    Gpu& gpu = node.gpus[static_cast<size_t>(beat.index)];
    gpu.telemetry = beat.telemetry;
    if (beat.lost) take_gpu_out(draft, draft.edit_node(c.node_id), gpu, "GPU lost", now_ms);
    if (!beat.xids.empty()) {
      take_gpu_out(draft, draft.edit_node(c.node_id), gpu,
                   fmt::format("critical XID {}", beat.xids.front()), now_ms);
    }
  }
  set_gpu_problem(draft, c.node_id, c.gpu_problem, now_ms);
  if (c.images_reported) {
    Node& reporting = draft.edit_node(c.node_id);
    reporting.images = c.images;
    reporting.image_store = c.image_store;
    reporting.images_at_ms = now_ms;
  }
  record_pull_reports(draft, c.node_id, c.pulls, now_ms);
  std::set<std::string> reported;
  for (const WorkloadReport& report : c.workloads) {
    reported.insert(report.instance_id);
    apply_report(draft, *draft.node(c.node_id), report, now_ms);
  }
  for (const std::string& id : draft.instances_on(c.node_id)) {
    if (draft.instance(id)->state == InstanceState::kRunning && !reported.contains(id)) {
      end_instance(draft, id, InstanceState::kFailed, now_ms, "the node's agent no longer runs it");
    }
  }
  idle_heartbeat(draft, c, was.last_heartbeat_ms, now_ms, placing.options);
  int used_before = 0;
  for (const Gpu& gpu : state.node(c.node_id)->gpus) used_before += gpu.used_milli;
  int used_after = 0;
  for (const Gpu& gpu : draft.node(c.node_id)->gpus) used_after += gpu.used_milli;
  if (came_back || used_after < used_before) schedule_queue(draft, now_ms, placing);
  // What this heartbeat's answer hands to the agent is now on its way to start.
  for (const std::string& id : draft.instances_on(c.node_id)) {
    if (draft.instance(id)->state == InstanceState::kScheduled) {
      transition(draft.edit_instance(id), InstanceState::kStarting, now_ms,
                 "handed to the node's agent");
    }
  }
  Node& after = draft.edit_node(c.node_id);
  if (after.admin == NodeAdmin::kDraining && draft.instances_on(c.node_id).empty()) {
    after.admin = NodeAdmin::kCordoned;
  }
  return draft.rows();
}

Result<Rows> apply(const State& state, const SetNodeAdmin& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  if (auto found = node_exists(state, c.node_id); !found) return std::unexpected(found.error());
  Draft draft(state);
  Node& node = draft.edit_node(c.node_id);
  node.admin = c.admin;
  if (node.admin == NodeAdmin::kDraining && draft.instances_on(c.node_id).empty()) {
    node.admin = NodeAdmin::kCordoned;  // Nothing to wait for: drained already.
  }
  return draft.rows();
}

Result<Rows> apply(const State& state, const RevokeNodeCredential& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  if (auto found = node_exists(state, c.node_id); !found) return std::unexpected(found.error());
  Draft draft(state);
  draft.edit_node(c.node_id).credential_hash.clear();
  return draft.rows();
}

Result<Rows> apply(const State& state, const DeleteNode& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto found = node_exists(state, c.node_id); !found) return std::unexpected(found.error());
  const Node* node = state.node(c.node_id);
  if (node->deleted_at_ms != 0) return Rows{};
  Draft draft(state);
  if (!draft.instances_on(c.node_id).empty()) {
    return fail(ErrorCode::kConflict,
                fmt::format("node {} has work placed on it; drain it first", node->name));
  }
  remove_node(draft, c.node_id, now_ms);
  return draft.rows();
}

void lose_silent_nodes(Draft& draft, TimeMs now_ms, const CoreOptions& options) {
  const State& state = draft.base();
  for (const auto& [id, node] : state.nodes) {
    if (node.deleted_at_ms != 0) continue;
    const TimeMs last = node.last_heartbeat_ms != 0 ? node.last_heartbeat_ms : node.joined_at_ms;
    // Silence while the controller was away is not the node's: it could not be heard.
    const TimeMs silent_since = std::max(last, state.resumed_at_ms);
    if (node.lost || now_ms - silent_since <= options.heartbeat_timeout_ms) continue;
    draft.edit_node(id).lost = true;
    // The work was last known alive at the last heartbeat: that is when it ended.
    for (const std::string& instance_id : draft.instances_on(id)) {
      end_instance(draft, instance_id, InstanceState::kLost, last,
                   fmt::format("node {} stopped answering", node.name));
    }
  }
}

void stop_overrun_work(Draft& draft, TimeMs now_ms) {
  for (const std::string& id : draft.base().placed) {
    const Instance& instance = *draft.base().instance(id);
    if (instance.state == InstanceState::kRunning && instance.spec.max_run_s > 0 &&
        !instance.stop_requested &&
        now_ms - instance.started_at_ms >= instance.spec.max_run_s * 1000) {
      Instance& stopping = draft.edit_instance(id);
      stopping.stop_requested = true;
      stopping.stop_reason = "maximum run time reached";
      stopping.events.push_back(InstanceEvent{now_ms, "", stopping.stop_reason});
      ++draft.edit_node(stopping.node_id).generation;
    }
  }
}

void put(State& state, const JoinToken& token) { state.join_tokens[token.id] = token; }

void put(State& state, const Node& node) {
  auto old = state.nodes.find(node.id);
  const bool is_new = old == state.nodes.end();
  if (!is_new) {
    // What instances hold is counted by their node's GPU models, which never change.
    assert(std::ranges::equal(old->second.gpus, node.gpus, {}, &Gpu::model, &Gpu::model));
    state.node_by_credential.erase(old->second.credential_hash);
    state.capacity.add(Resources::capacity_of(old->second), -1);
    add_free(state.free_by_model, old->second, -1);
    for (const Gpu& gpu : old->second.gpus) add_milli(state.gpus_by_model, gpu.model, -1);
  }
  state.capacity.add(Resources::capacity_of(node), 1);
  add_free(state.free_by_model, node, 1);
  for (const Gpu& gpu : node.gpus) add_milli(state.gpus_by_model, gpu.model, 1);
  state.nodes[node.id] = node;
  if (is_new) {
    // Work placed here before the node was known (a reload's order) holds its GPUs from now.
    if (auto placed = state.placed_on.find(node.id); placed != state.placed_on.end()) {
      for (const std::string& id : placed->second) state.count_held(state.instances.at(id), 1);
    }
  }
  if (!node.credential_hash.empty()) state.node_by_credential[node.credential_hash] = node.id;
  state.node_by_name[node.name] = node.id;
}

}  // namespace allot
