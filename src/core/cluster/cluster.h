// The cluster commands' logic, used by Core::apply. Each function reads the state, works on a
// Draft, and returns the changed objects or a rejection (changing nothing).
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/limits.h"
#include "core/kernel/handler.h"
#include "core/kernel/lifecycle.h"

namespace allot {

// The part of an instance's spec that says what it asks for and where: GPUs or a share of one,
// known models, and the region wishes (core/admission/quote.h). Shared by instances and quotes.
[[nodiscard]] Status check_gpu_request(const InstanceSpec& spec);
// The whole spec as CreateInstance checks it, idle policy aside (its bounds are settings): the GPU
// request, a command, environment and label names, the gang's shape, no negative reservations.
[[nodiscard]] Status check_instance_spec(const InstanceSpec& spec);

// - CreateJoinToken: adds a join token. Refuses invalid_id (bad id) and invalid_argument (bad name,
//   a token hash that is not 64 characters or is already used, an expiry not in the future).
// - RevokeJoinToken: sets the token's revoked time; one already revoked is left as it is (no rows).
//   Refuses not_found for an unknown token.
// - JoinNode: adds the node (joining its token's pool, if any), or updates the credential, agent
//   version, labels and address of the live node of that name with the same GPU UUIDs. Refuses
//   unauthenticated (bad token), invalid_argument, limit_exceeded, already_exists, invalid_id.
// - NodeHeartbeat: records the node's liveness, telemetry, GPU health, images, pull and workload
//   reports and idle readings; fails running work it no longer reports; may schedule the queue.
//   Refuses not_found (unknown node), unauthenticated (deleted node) and invalid_argument (no such
//   GPU index).
// - SetNodeAdmin: sets the node's admin state; draining a node with no work cordons it at once.
//   Refuses not_found for an unknown node.
// - RevokeNodeCredential: clears the node's credential hash. Refuses not_found for an unknown node.
// - DeleteNode: marks the node deleted (remove_node); one already deleted is left as it is. Refuses
//   not_found for an unknown node, and conflict while work is placed on the node (drain it first).
// - CreateInstance: adds the instance queued (a gang: one per node) and tries to place it. Refuses
//   invalid_id, not_found (no live project in the tenant), invalid_argument (bad spec),
//   already_exists (id taken), limit_exceeded (a limit or quota), budget_exceeded, no_price,
//   insufficient_funds.
// - StopInstance: stops the instance, and a gang member's whole gang (stop_member), then schedules
//   the queue; one ended or already stopping is left as it is. Refuses not_found for an unknown
//   instance.
ALLOT_HANDLERS(CreateJoinToken, RevokeJoinToken, JoinNode, NodeHeartbeat, SetNodeAdmin,
               RevokeNodeCredential, DeleteNode, CreateInstance, StopInstance);
// The timer's cluster phases (core/tick.cc): nodes silent past the heartbeat timeout are lost
// with their work; running work past its maximum run time is asked to stop.
void lose_silent_nodes(Draft& draft, TimeMs now_ms, const CoreOptions& options);
void stop_overrun_work(Draft& draft, TimeMs now_ms);

// Shared by the functions above (instances.cc).

// Binds an instance to its placement: the node's GPUs, CPU and memory are taken; it is scheduled.
void bind(Draft& draft, Instance& instance, const Placement& placement, TimeMs now_ms);
// Tries to place queued instances: on-demand and reserved before spot, then the tenant with the
// smallest dominant share, then the oldest; bounded backfill past a blocked head; on-demand work
// that fits nowhere may preempt spot work; quotas and reservations admit first (see queue.cc).
void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing);
// The queued instances as a pass tries them (at most `limit`): priority, then the tenant's
// weighted share, then arrival; a gang's members together.
std::vector<std::string> queue_order(const Draft& draft, const Scheduler& scheduler, size_t limit);

enum class Outcome { kPlaced, kNoRoom, kNotAdmitted };

// The request shapes that found no room in one scheduling pass, with the reason.
struct FailedShapes {
  using Key = std::pair<RequestShape, bool>;
  // `process_nodes`: whether the request's tenant may use process-runtime nodes.
  static Key key_of(const InstanceSpec& s, bool process_nodes) {
    return {request_shape(s), process_nodes};
  }
  std::map<Key, std::string> why;
  size_t preemptions = 0;  // Made by this pass's placements.
};

// Places one queued instance (or, given rank 0, its whole gang) if the rules admit it and it
// fits, preempting spot work for on-demand and reserved work where that is the only way; else
// records why it waits.
Outcome try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Placing& placing,
                  FailedShapes* failed = nullptr);
// Places every member of a gang on its own node, all at once or none (gang.cc).
Outcome place_gang(Draft& draft, const std::vector<std::string>& members, TimeMs now_ms,
                   const Placing& placing);

// Keep a row of the cluster domain in the state, with its indexes.
void put(State& state, const JoinToken& token);
void put(State& state, const Node& node);
void put(State& state, const Instance& instance);

}  // namespace allot
