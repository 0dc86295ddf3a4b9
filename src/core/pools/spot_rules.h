// The spot price rule's commands and its tick: every rule whose interval has passed measures the
// utilisation of its model's GPUs in its region and, when the curve's price differs from the spot
// price in force, sets the new price from that moment on.
#pragma once

#include "core/kernel/handler.h"

namespace allot {

// - SetSpotRule: sets (or replaces, keeping its created time) the rule of its model and region; it
//   prices at the next tick. Refuses invalid_argument (a model not in the catalog, a bad region,
//   curve or interval), limit_exceeded (a new rule past limits::kMaxSpotRules).
// - DeleteSpotRule: removes the rule of the model and region. Refuses not_found where there is
//   none.
ALLOT_HANDLERS(SetSpotRule, DeleteSpotRule);

// The allocated share of the in-service GPUs of `model` on the live nodes of `region`, in
// thousandths; 0 when there are none.
int64_t gpu_utilisation_permille(const State& state, const std::string& model,
                                 const std::string& region);

// The new spot prices and the rules that looked, for the rules due at `now_ms`.
Rows spot_rule_tick(const State& state, TimeMs now_ms);

void put(State& state, const SpotRule& rule);

}  // namespace allot
