// The timer as one ordered list of phases. Each phase reads the draft as the phases before it left
// it and adds its changes to the same draft, so the Tick is one command: all of it or none.
//
// The order, and why:
//  1. nodes lost      a node silent past the heartbeat timeout is lost, and its work ends at its
//                     last heartbeat, before any later phase counts that work as running.
//  2. max run time    running work past its limit is asked to stop.
//  3. idle            running work idle for its policy's window is stopped or its owner told;
//                     after 1 and 2, so that work already ended or stopping is left alone.
//  4. money           usage up to now is posted; prepaid work out of money and spot work priced
//                     out of its maximum stop; after 1-3, so that work that ended is charged to
//                     its end and no further.
//  5. budgets         month-to-date spend includes what 4 posted; thresholds alert and a spent
//                     budget stops its work.
//  6. queue           queued work is placed on what 1-5 freed.
//  7. spot prices     each rule due re-prices its model's spot GPUs from their utilisation as the
//                     tick found it (the state before it), so that this tick's own placements and
//                     stops do not feed back into the price they were made at.
#include "core/tick.h"

#include "core/cluster/cluster.h"
#include "core/cluster/idle.h"
#include "core/money/budgets.h"
#include "core/money/money.h"
#include "core/pools/spot_rules.h"

namespace allot {
namespace {

using Phase = void (*)(Draft& draft, TimeMs now_ms, const Placing& placing, const Tick& tick);

void add_rows(Draft& draft, Rows rows) {
  for (Row& row : rows) draft.add_row(std::move(row));
}

constexpr Phase kPhases[] = {
    [](Draft& draft, TimeMs now_ms, const Placing& placing, const Tick& /*tick*/) {
      lose_silent_nodes(draft, now_ms, placing.options);
    },
    [](Draft& draft, TimeMs now_ms, const Placing& /*placing*/, const Tick& /*tick*/) {
      stop_overrun_work(draft, now_ms);
    },
    [](Draft& draft, TimeMs now_ms, const Placing& placing, const Tick& /*tick*/) {
      idle_tick(draft, now_ms, placing.options);
    },
    [](Draft& draft, TimeMs now_ms, const Placing& placing, const Tick& tick) {
      settle_money(draft, now_ms, placing.options, tick.post_all);
    },
    [](Draft& draft, TimeMs now_ms, const Placing& /*placing*/, const Tick& /*tick*/) {
      add_rows(draft, budget_tick(draft, now_ms));
    },
    [](Draft& draft, TimeMs now_ms, const Placing& placing, const Tick& /*tick*/) {
      if (!draft.base().queue.empty()) schedule_queue(draft, now_ms, placing);
    },
    [](Draft& draft, TimeMs now_ms, const Placing& /*placing*/, const Tick& /*tick*/) {
      add_rows(draft, spot_rule_tick(draft.base(), now_ms));
    },
};

}  // namespace

Result<Rows> apply(const State& state, const Tick& c, TimeMs now_ms, const Placing& placing) {
  Draft draft(state);
  for (Phase phase : kPhases) phase(draft, now_ms, placing, c);
  return draft.rows();
}

}  // namespace allot
