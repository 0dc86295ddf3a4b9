// Idle stop in the core: the SetProjectIdle command, and the steps of the heartbeat and the timer
// that track how long each running instance's GPUs have been idle and act on its policy.
//
// A missing or stale reading counts as busy, never as idle: a heartbeat without a utilisation
// reading for one of an instance's GPUs, or one that follows a silence longer than
// CoreOptions::idle_stale_ms(), starts its idle clock again, and the timer resets the clock of
// work whose node has been silent that long. So work is only ever stopped on readings that show
// it idle, without a gap, for the whole window.
#pragma once

#include <optional>

#include "common/error.h"
#include "core/cluster/cluster.h"
#include "core/kernel/command.h"
#include "core/kernel/handler.h"

namespace allot {

// A policy's values: threshold 1..100 %, window from options.idle_min_window_s to
// limits::kMaxIdleWindowS. Fails with kInvalidArgument naming the bad value.
[[nodiscard]] Status check_idle_policy(const IdlePolicy& policy, const CoreOptions& options);

// The policy that applies to an instance: its own, else its project's. A gang's members share
// their spec, so one policy covers the gang; the gang is idle only while every member is.
std::optional<IdlePolicy> idle_policy_for(const State& state, const Instance& instance);

// "idle: GPUs under 10 % for 600 s".
std::string idle_reason(const IdlePolicy& policy);

// - SetProjectIdle: sets the project's idle policy, or clears it given none; no rows when
//   unchanged. Refuses not_found (no live project) and invalid_argument (a bad policy, as
//   check_idle_policy says).
ALLOT_HANDLERS(SetProjectIdle);

// The heartbeat's step, after its workload reports are applied: for each running instance on the
// node with a policy, starts, continues or ends its idle stretch from this heartbeat's readings,
// and once the stretch reaches the window stops the instance or notifies its owner (once per
// stretch), each decision an event. A gang member's stretch acts only once every member of its
// gang has been idle for the window, and then on the whole gang, with one event. `previous_ms` is
// when the node was last heard before this heartbeat (0: never). The events are numbered after the
// state's last: the heartbeat makes no other events.
void idle_heartbeat(Draft& draft, const NodeHeartbeat& beat, TimeMs previous_ms, TimeMs now_ms,
                    const CoreOptions& options);

// The timer's step: the idle clock of running work whose node has been silent past the staleness
// bound starts again (a stale reading counts as busy).
void idle_tick(Draft& draft, TimeMs now_ms, const CoreOptions& options);

}  // namespace allot
