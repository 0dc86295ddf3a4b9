// The timer: the Tick command's handler, an ordered list of phases over one draft (tick.cc).
#pragma once

#include "core/kernel/handler.h"

namespace allot {

[[nodiscard]] Result<Rows> apply(const State& state, const Tick& c, TimeMs now_ms,
                                 const Placing& placing);

}  // namespace allot
