// The cluster commands' logic, used by Core::apply. Each function reads the state, works on a
// Draft, and returns the changed objects or a rejection (changing nothing).
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/limits.h"
#include "core/command.h"
#include "core/scheduler.h"

namespace allot {

enum class InvariantCheck { kOff, kCount, kAbort };
#ifdef NDEBUG
inline constexpr InvariantCheck kDefaultInvariantCheck = InvariantCheck::kOff;
#else
inline constexpr InvariantCheck kDefaultInvariantCheck = InvariantCheck::kAbort;
#endif

struct CoreOptions {
  // A node not heard from for this long is lost, and its instances with it.
  int64_t heartbeat_timeout_ms = 30'000;
  // Backfill: while the queue's head is blocked, at most this many later instances are tried
  // past it, and none once the head has waited this long (so that it is not starved).
  size_t max_backfill = 100;
  int64_t starvation_ms = 300'000;
  // Usage is posted to the ledger this often while work runs, and when it ends.
  int64_t rating_interval_ms = 60'000;
  // A bounded tenant's running work holds this much of its charge ahead on its balance.
  int64_t runway_s = 3'600;
  // Agents report this often. A GPU reading older than three intervals is stale: idle stop takes
  // it as busy, so that a silent node's work is never stopped for being idle.
  int64_t heartbeat_interval_ms = 2'000;
  // The shortest idle-stop window a new policy may have.
  int64_t idle_min_window_s = limits::kDefaultMinIdleWindowS;
  int64_t idle_stale_ms() const { return 3 * heartbeat_interval_ms; }
  // Spot work where no spot price is in force is charged the on-demand price (allotd's
  // `spot_fallback = "on-demand"`); off, it is not placed there (meter::PriceCatalog).
  bool spot_falls_back = false;
  // Any tenant's work may be placed on nodes of the process runtime (not isolated from the host);
  // off, only the operator's own tenant's (allotd's `process_runtime_tenants`).
  bool process_nodes_for_all = false;
  // After every command the core checks its invariants (core/kernel/invariants.h): kAbort stops
  // the process at the first violation (debug builds and tests), kCount keeps them for
  // Core::violations() (`allot sim chaos`), kOff checks nothing (release builds).
  InvariantCheck check_invariants = kDefaultInvariantCheck;
};

// What placement needs besides the state.
struct Placing {
  const Scheduler& scheduler;
  const CoreOptions& options;
};

using Rows = std::vector<Row>;

// The part of an instance's spec that says what it asks for and where: GPUs or a share of one,
// known models, and the region wishes (core/quote.h). Shared by instances and quotes.
[[nodiscard]] Status check_gpu_request(const InstanceSpec& spec);

[[nodiscard]] Result<Rows> create_join_token(const State& state, const CreateJoinToken& c,
                                             TimeMs now_ms);
[[nodiscard]] Result<Rows> revoke_join_token(const State& state, const RevokeJoinToken& c,
                                             TimeMs now_ms);
[[nodiscard]] Result<Rows> join_node(const State& state, const JoinNode& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> node_heartbeat(const State& state, const NodeHeartbeat& c, TimeMs now_ms,
                                          const Placing& placing);
[[nodiscard]] Result<Rows> set_node_admin(const State& state, const SetNodeAdmin& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> revoke_node_credential(const State& state,
                                                  const RevokeNodeCredential& c);
// Refused with kConflict while work is placed on the node.
[[nodiscard]] Result<Rows> delete_node(const State& state, const DeleteNode& c, TimeMs now_ms);
// Takes a node out of the fleet for good at now_ms (its machine is gone): work still on it is
// lost, its credential stops working. Shared by DeleteNode and a pool's deletion.
void remove_node(Draft& draft, const std::string& node_id, TimeMs now_ms);
[[nodiscard]] Result<Rows> create_instance(const State& state, const CreateInstance& c,
                                           TimeMs now_ms, const Placing& placing);
[[nodiscard]] Result<Rows> stop_instance(const State& state, const StopInstance& c, TimeMs now_ms,
                                         const Placing& placing);
[[nodiscard]] Result<Rows> set_quota(const State& state, const SetQuota& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> delete_quota(const State& state, const DeleteQuota& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> create_reservation(const State& state, const CreateReservation& c,
                                              TimeMs now_ms);
[[nodiscard]] Result<Rows> cancel_reservation(const State& state, const CancelReservation& c,
                                              TimeMs now_ms);
[[nodiscard]] Result<Rows> set_price(const State& state, const SetPrice& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> set_tenant_weight(const State& state, const SetTenantWeight& c);
[[nodiscard]] Result<Rows> tick(const State& state, const Tick& c, TimeMs now_ms,
                                const Placing& placing);

// Shared by the functions above (instances.cc).

// Moves an instance to `to`, recording the event; final states set ended_at_ms to `at_ms`.
void transition(Instance& instance, InstanceState to, TimeMs at_ms, std::string message);
// Ends a bound or queued instance in a final state and gives back what it held.
void end_instance(Draft& draft, const std::string& id, InstanceState to, TimeMs at_ms,
                  std::string message);
// Asks an instance to stop: one that has not started ends now (stopped, with `message`); a running
// one is told to stop and ends when its agent reports it gone.
void stop_member(Draft& draft, const std::string& id, TimeMs at_ms, const std::string& message);
// Binds an instance to its placement: the node's GPUs, CPU and memory are taken; it is scheduled.
void bind(Draft& draft, Instance& instance, const Placement& placement, TimeMs now_ms);
// Tries to place queued instances: on-demand and reserved before spot, then the tenant with the
// smallest dominant share, then the oldest; bounded backfill past a blocked head; on-demand work
// that fits nowhere may preempt spot work; quotas and reservations admit first (see queue.cc).
void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing);

enum class Outcome { kPlaced, kNoRoom, kNotAdmitted };

// The request shapes that found no room in one scheduling pass, with the reason.
struct FailedShapes {
  using Key = std::tuple<int, int, std::vector<std::string>, int64_t, int64_t, std::string,
                         PriceClass, int64_t, std::vector<std::string>, Prefer, std::string, bool>;
  // `process_nodes`: whether the request's tenant may use process-runtime nodes.
  static Key key_of(const InstanceSpec& s, bool process_nodes) {
    return {s.gpus,       s.gpu_milli, s.gpu_models,  s.cpu_milli,
            s.memory_mib, s.region,    s.price_class, s.max_price_micros,
            s.regions,    s.prefer,    s.from,        process_nodes};
  }
  std::map<Key, std::string> why;
};

// Places one queued instance (or, given rank 0, its whole gang) if the rules admit it and it
// fits, preempting spot work for on-demand and reserved work where that is the only way; else
// records why it waits.
Outcome try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Placing& placing,
                  FailedShapes* failed = nullptr);
// All members of a gang, in rank order, as the draft sees them.
std::vector<std::string> gang_members(const Draft& draft, const std::string& gang_id);
// Places every member of a gang on its own node, all at once or none (gang.cc).
Outcome place_gang(Draft& draft, const std::vector<std::string>& members, TimeMs now_ms,
                   const Placing& placing);

}  // namespace allot
