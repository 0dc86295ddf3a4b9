#include "core/kernel/state.h"

#include <algorithm>

namespace allot {

void put(State& state, const Event& event) {
  state.last_event_seq = std::max(state.last_event_seq, event.seq);
}

}  // namespace allot
