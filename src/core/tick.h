// The timer: the Tick command's handler, an ordered list of phases over one draft (tick.cc).
#pragma once

#include "core/kernel/handler.h"

namespace allot {

ALLOT_HANDLERS(Tick);

}  // namespace allot
