// Node pools: their settings, and the steps of a pool node's life that the autoscaler and its
// providers report. Every check runs before anything changes; every decision is an event.
#include "core/pools/pools.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/enum_names.h"
#include "common/limits.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/lifecycle.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

constexpr EnumNames<PoolProvider, 3> kPoolProviderNames{{"static", "command", "local"}};

constexpr EnumNames<PoolNodeState, 5> kPoolNodeStateNames{
    {"booting", "ready", "deleting", "deleted", "failed"}};

Status check_timer(std::string_view field, int64_t ms) {
  if (ms <= 0 || ms > limits::kMaxPoolTimerMs) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must be between 1 ms and a day", field));
  }
  return {};
}

Status check_size(int min_nodes, int max_nodes) {
  if (min_nodes < 0 || max_nodes < 0) {
    return fail(ErrorCode::kInvalidArgument, "min_nodes and max_nodes must be >= 0");
  }
  if (max_nodes > limits::kMaxPoolNodes) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("a pool holds at most {} nodes", limits::kMaxPoolNodes));
  }
  if (min_nodes > max_nodes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("min_nodes ({}) is above max_nodes ({})", min_nodes, max_nodes));
  }
  return {};
}

Status check_timers(int64_t boot_ms, int64_t idle_ms, int64_t cooldown_ms) {
  if (auto ok = check_timer("boot_timeout", boot_ms); !ok) return ok;
  if (auto ok = check_timer("idle_timeout", idle_ms); !ok) return ok;
  if (cooldown_ms < 0 || cooldown_ms > limits::kMaxPoolTimerMs) {
    return fail(ErrorCode::kInvalidArgument, "cooldown must be between 0 and a day");
  }
  return {};
}

Status check_commands(const Pool& p) {
  for (const std::string* command : {&p.create_command, &p.delete_command}) {
    if (command->size() > limits::kMaxPoolCommandBytes) {
      return fail(ErrorCode::kLimitExceeded, "a pool command is at most 4096 bytes");
    }
    if (command->find('\0') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument, "a pool command may not hold a NUL byte");
    }
  }
  const bool has_commands = !p.create_command.empty() || !p.delete_command.empty();
  if (p.provider == PoolProvider::kCommand &&
      (p.create_command.empty() || p.delete_command.empty())) {
    return fail(ErrorCode::kInvalidArgument,
                "the command provider needs create_command and delete_command");
  }
  if (p.provider != PoolProvider::kCommand && has_commands) {
    return fail(ErrorCode::kInvalidArgument, "only the command provider runs commands");
  }
  return {};
}

// A pool's name starts its nodes' host names: letters, digits and '-', at most 40.
Status check_pool_name(const std::string& name) {
  constexpr size_t kMaxPoolNameBytes = 40;
  const bool fits = !name.empty() && name.size() <= kMaxPoolNameBytes &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
                    });
  if (!fits) {
    return fail(ErrorCode::kInvalidArgument,
                "a pool's name is 1 to 40 letters, digits and '-' (it starts its nodes' names)");
  }
  return {};
}

Status check_pool(const State& state, const Pool& p) {
  if (auto ok = check_id("id", p.id, "pol"); !ok) return ok;
  if (auto ok = check_pool_name(p.name); !ok) return ok;
  if (auto ok = check_name("region", p.region); !ok) return ok;
  if (!is_catalog_gpu_model(p.gpu_model)) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("unknown GPU model {}", p.gpu_model));
  }
  if (auto ok = check_size(p.min_nodes, p.max_nodes); !ok) return ok;
  if (p.gpus_per_node < 1 || static_cast<size_t>(p.gpus_per_node) > limits::kMaxGpusPerNode) {
    return fail(ErrorCode::kInvalidArgument, "gpus_per_node must be between 1 and 16");
  }
  if (p.cpu_milli < 0 || p.memory_mib < 0) {
    return fail(ErrorCode::kInvalidArgument, "cpu and memory must be >= 0");
  }
  if (auto ok = check_timers(p.boot_timeout_ms, p.idle_timeout_ms, p.cooldown_ms); !ok) return ok;
  if (auto ok = check_commands(p); !ok) return ok;
  size_t live = 0;
  for (const auto& [id, other] : state.pools) {
    if (other.deleted()) continue;
    ++live;
    if (other.name == p.name) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a pool named {} exists", p.name));
    }
  }
  if (live >= limits::kMaxPools) {
    return fail(ErrorCode::kLimitExceeded, fmt::format("at most {} pools", limits::kMaxPools));
  }
  if (state.pools.contains(p.id)) {
    return fail(ErrorCode::kAlreadyExists, fmt::format("pool {} exists", p.id));
  }
  return {};
}

// An autoscaler decision or a provider's answer, for the event log.
class PoolEvents {
 public:
  explicit PoolEvents(Draft& draft)
      : draft_(draft), tenant_id_(draft.base().operator_tenant_id()) {}

  Event make(std::string kind, const Pool& pool, const std::string& reason, TimeMs now_ms,
             nlohmann::json extra = nlohmann::json::object()) {
    extra["pool_id"] = pool.id;
    extra["pool"] = pool.name;
    extra["reason"] = reason;
    return Event{.seq = draft_.next_event_seq(),
                 .at_ms = now_ms,
                 .tenant_id = tenant_id_,
                 .kind = std::move(kind),
                 .payload = extra.dump()};
  }

 private:
  Draft& draft_;  // Numbers the events.
  std::string tenant_id_;
};

Event node_event(PoolEvents& events, std::string kind, const Pool& pool, const PoolNode& node,
                 const std::string& reason, TimeMs now_ms) {
  return events.make(std::move(kind), pool, reason, now_ms,
                     {{"pool_node_id", node.id}, {"node", node.name}, {"node_id", node.node_id}});
}

}  // namespace

std::string_view pool_provider_name(PoolProvider provider) {
  return kPoolProviderNames.name(provider, "static");
}

std::optional<PoolProvider> parse_pool_provider(std::string_view name) {
  return kPoolProviderNames.parse(name);
}

std::string_view pool_node_state_name(PoolNodeState state) {
  return kPoolNodeStateNames.name(state, "failed");
}

std::optional<PoolNodeState> parse_pool_node_state(std::string_view name) {
  return kPoolNodeStateNames.parse(name);
}

int live_pool_nodes(const State& state, const std::string& pool_id) {
  int live = 0;
  for (const auto& [id, node] : state.pool_nodes) {
    if (node.pool_id == pool_id && node.live()) ++live;
  }
  return live;
}

Result<Rows> apply(const State& state, const CreatePool& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_pool(state, c.pool); !ok) return std::unexpected(ok.error());
  Pool pool = c.pool;
  pool.created_at_ms = now_ms;
  pool.deleted_at_ms = 0;
  pool.last_scale_up_ms = 0;
  pool.last_scale_down_ms = 0;
  pool.boot_failures = 0;
  pool.delete_failures = 0;
  return Rows{pool};
}

Result<Rows> apply(const State& state, const UpdatePool& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  auto found = found_live(state.pool(c.id), "pool", c.id);
  if (!found) return std::unexpected(found.error());
  Pool pool = **found;
  pool.min_nodes = c.min_nodes.value_or(pool.min_nodes);
  pool.max_nodes = c.max_nodes.value_or(pool.max_nodes);
  pool.boot_timeout_ms = c.boot_timeout_ms.value_or(pool.boot_timeout_ms);
  pool.idle_timeout_ms = c.idle_timeout_ms.value_or(pool.idle_timeout_ms);
  pool.cooldown_ms = c.cooldown_ms.value_or(pool.cooldown_ms);
  if (auto ok = check_size(pool.min_nodes, pool.max_nodes); !ok) return std::unexpected(ok.error());
  if (auto ok = check_timers(pool.boot_timeout_ms, pool.idle_timeout_ms, pool.cooldown_ms); !ok) {
    return std::unexpected(ok.error());
  }
  if (pool == **found) return Rows{};
  return Rows{pool};
}

Result<Rows> apply(const State& state, const DeletePool& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto deleted = deleted_copy(state.pool(c.id), "pool", c.id, now_ms);
  if (!deleted) return std::unexpected(deleted.error());
  if (const int live = live_pool_nodes(state, c.id); live > 0) {
    return fail(ErrorCode::kConflict,
                fmt::format("pool {} still has {} nodes: set max_nodes to 0 and wait", c.id, live));
  }
  return Rows{*deleted};
}

Result<Rows> apply(const State& state, const ScaleUpPool& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto found = found_live(state.pool(c.pool_id), "pool", c.pool_id);
  if (!found) return std::unexpected(found.error());
  Pool pool = **found;
  if (pool.provider == PoolProvider::kStatic) {
    return fail(ErrorCode::kInvalidArgument, "a static pool's nodes join on their own");
  }
  if (c.launches.empty()) return fail(ErrorCode::kInvalidArgument, "no nodes to launch");
  const int live = live_pool_nodes(state, pool.id);
  if (live + static_cast<int>(c.launches.size()) > pool.max_nodes) {
    return fail(ErrorCode::kConflict,
                fmt::format("pool {} would pass its maximum of {}", pool.name, pool.max_nodes));
  }
  Rows rows;
  Draft numbering(state);  // Numbers the events; the rows are written here.
  PoolEvents events(numbering);
  for (const PoolLaunch& launch : c.launches) {
    if (auto ok = check_id("pool node id", launch.pool_node_id, "pnd"); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto ok = check_id("join token id", launch.join_token_id, "jtk"); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto ok = check_name("node name", launch.name); !ok) return std::unexpected(ok.error());
    if (state.pool_nodes.contains(launch.pool_node_id) ||
        state.join_tokens.contains(launch.join_token_id) ||
        state.node_by_name.contains(launch.name)) {
      return fail(ErrorCode::kAlreadyExists, "a launch reuses an id or a node name");
    }
    if (launch.token_hash.size() != 64 || state.join_token_for_hash(launch.token_hash) != nullptr) {
      return fail(ErrorCode::kInvalidArgument, "bad or reused join token hash");
    }
    rows.emplace_back(JoinToken{.id = launch.join_token_id,
                                .name = launch.name,
                                .token_hash = launch.token_hash,
                                .created_at_ms = now_ms,
                                .expires_at_ms = now_ms + pool.boot_timeout_ms});
    PoolNode node{.id = launch.pool_node_id,
                  .pool_id = pool.id,
                  .name = launch.name,
                  .join_token_id = launch.join_token_id,
                  .reason = c.reason,
                  .requested_at_ms = now_ms};
    rows.emplace_back(node_event(events, "pool.scale_up", pool, node, c.reason, now_ms));
    rows.emplace_back(std::move(node));
  }
  pool.last_scale_up_ms = now_ms;
  rows.emplace_back(pool);
  return rows;
}

Result<Rows> apply(const State& state, const RetirePoolNode& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const PoolNode* found = state.pool_node(c.id);
  if (found == nullptr) return std::unexpected(not_found("pool node", c.id));
  if (found->state != PoolNodeState::kReady) {
    return fail(ErrorCode::kConflict,
                fmt::format("pool node {} is {}", c.id, pool_node_state_name(found->state)));
  }
  Draft draft(state);
  if (!found->node_id.empty() && state.node(found->node_id) != nullptr) {
    if (!draft.instances_on(found->node_id).empty()) {
      return fail(ErrorCode::kConflict, fmt::format("node {} runs work", found->name));
    }
    Node& node = draft.edit_node(found->node_id);
    node.admin = NodeAdmin::kCordoned;
  }
  Pool pool = *state.pool(found->pool_id);
  pool.last_scale_down_ms = now_ms;
  PoolNode node = *found;
  node.state = PoolNodeState::kDeleting;
  node.retired_at_ms = now_ms;
  node.reason = c.reason;
  PoolEvents events(draft);
  draft.add_row(node_event(events, "pool.scale_down", pool, node, c.reason, now_ms));
  draft.add_row(node);
  draft.add_row(pool);
  return draft.rows();
}

Result<Rows> apply(const State& state, const RecordPoolNode& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const PoolNode* found = state.pool_node(c.id);
  if (found == nullptr) return std::unexpected(not_found("pool node", c.id));
  PoolNode node = *found;
  Pool pool = *state.pool(node.pool_id);
  Draft draft(state);
  PoolEvents events(draft);
  switch (c.outcome) {
    case PoolNodeOutcome::kCreated:
      node.provider_ref = c.provider_ref;
      break;
    case PoolNodeOutcome::kCreateFailed:
    case PoolNodeOutcome::kBootTimedOut: {
      if (node.state != PoolNodeState::kBooting) return Rows{};  // It joined after all.
      node.state = PoolNodeState::kFailed;
      node.reason = c.detail;
      node.ended_at_ms = now_ms;
      ++pool.boot_failures;
      if (const auto token = state.join_tokens.find(node.join_token_id);
          token != state.join_tokens.end() && token->second.revoked_at_ms == 0) {
        JoinToken spent = token->second;
        spent.revoked_at_ms = now_ms;
        draft.add_row(spent);
      }
      draft.add_row(node_event(events, "pool.boot_failed", pool, node, c.detail, now_ms));
      break;
    }
    case PoolNodeOutcome::kDeleted:
      if (node.state != PoolNodeState::kDeleting) return Rows{};
      node.state = PoolNodeState::kDeleted;
      node.ended_at_ms = now_ms;
      if (!node.node_id.empty() && state.node(node.node_id) != nullptr) {
        // Its machine is gone: the node leaves the fleet now, as one an operator deletes.
        remove_node(draft, node.node_id, now_ms);
      }
      draft.add_row(node_event(events, "pool.node_deleted", pool, node, node.reason, now_ms));
      break;
    case PoolNodeOutcome::kDeleteFailed:
      if (node.state != PoolNodeState::kDeleting) return Rows{};
      node.delete_tried_at_ms = now_ms;
      ++node.delete_attempts;
      ++pool.delete_failures;
      draft.add_row(node_event(events, "pool.delete_failed", pool, node, c.detail, now_ms));
      break;
  }
  draft.add_row(node);
  draft.add_row(pool);
  return draft.rows();
}

void join_pool(Draft& draft, const JoinToken& token, Node& node, TimeMs now_ms) {
  const State& state = draft.base();
  for (const auto& [id, candidate] : state.pool_nodes) {
    if (candidate.join_token_id != token.id || candidate.state != PoolNodeState::kBooting) continue;
    const Pool& pool = *state.pool(candidate.pool_id);
    node.region = pool.region;
    node.labels["pool"] = pool.name;
    PoolNode joined = candidate;
    joined.state = PoolNodeState::kReady;
    joined.node_id = node.id;
    joined.joined_at_ms = now_ms;
    JoinToken spent = token;
    spent.revoked_at_ms = now_ms;  // One node per token.
    PoolEvents events(draft);
    draft.add_row(node_event(events, "pool.node_joined", pool, joined, "joined", now_ms));
    draft.add_row(joined);
    draft.add_row(spent);
    return;
  }
}

void put(State& state, const Pool& pool) { state.pools[pool.id] = pool; }

void put(State& state, const PoolNode& node) { state.pool_nodes[node.id] = node; }

}  // namespace allot
