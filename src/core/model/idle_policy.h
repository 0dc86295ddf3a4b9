// Idle stop: a policy that stops running work whose GPUs stay nearly unused for a while, or tells
// its owner. It is set per project or per instance at launch (the instance's own wins); the core
// applies it to the GPU readings that agents send with every heartbeat (see core/cluster/idle.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace allot {

enum class IdleAction {
  kStop,    // The instance is stopped, as if its owner had asked.
  kNotify,  // An event to the owner, once per idle stretch; the work runs on.
};

std::string_view idle_action_name(IdleAction action);
std::optional<IdleAction> parse_idle_action(std::string_view name);

struct IdlePolicy {
  // Idle means every GPU of the instance reads under this utilisation, 1..100 %.
  int threshold_pct = 0;
  // For this long without a break (limits::kMaxIdleWindowS; the lower bound is the core's option).
  int64_t window_s = 0;
  IdleAction action = IdleAction::kStop;

  bool operator==(const IdlePolicy&) const = default;
};

}  // namespace allot
