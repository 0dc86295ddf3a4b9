// What every command's handler is given, and what it returns. Each domain declares one overload
//
//   [[nodiscard]] Handler<C> apply;
//
// that is, Result<Rows> apply(const State&, const C&, TimeMs now_ms, const Placing&), per command C
// it lists (core/model/*_commands.h), all in one ALLOT_HANDLERS(...) line beneath their contracts.
// Each handler reads the state as it was before the
// command, works on a Draft, and returns the changed rows or a rejection that changes nothing.
// The machine (core/machine.cc) dispatches to them with one std::visit, so a command without its
// overload does not compile. Each row likewise has one `void put(State&, const R&)` overload that
// keeps it in the state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/for_each.h"
#include "common/limits.h"
#include "core/kernel/command.h"
#include "core/kernel/row.h"
#include "core/kernel/scheduler.h"

namespace allot {

enum class InvariantCheck { kOff, kCount, kAbort };
// Optimised builds (the release preset keeps assert() but not these whole-state checks) skip them.
#if defined(NDEBUG) || defined(__OPTIMIZE__)
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
  // Instances one tenant may have queued or running at once (allotd's
  // `max_active_instances_per_tenant`); past it, a create is refused with limit_exceeded.
  int64_t max_active_per_tenant = limits::kDefaultMaxActiveInstancesPerTenant;
  // The shortest idle-stop window a new policy may have.
  int64_t idle_min_window_s = limits::kDefaultMinIdleWindowS;
  // A shared service's price rise reaches the callers it has only this long after they are told.
  int64_t service_price_notice_ms = 86'400'000;
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

// The type of command C's handler.
template <class C>
using Handler = Result<Rows>(const State& state, const C& c, TimeMs now_ms, const Placing& placing);

}  // namespace allot

// ALLOT_HANDLERS(A, B) declares `[[nodiscard]] Handler<A> apply; [[nodiscard]] Handler<B> apply;`.
#define ALLOT_HANDLERS(...) ALLOT_FOR_EACH(ALLOT_HANDLER, __VA_ARGS__)
#define ALLOT_HANDLER(Command) [[nodiscard]] Handler<Command> apply;
