// The operator's books in the core: the commands that keep assets, sites, fixed costs and rental
// prices, and the heartbeat's step that meters energy and carbon from the GPUs' counters.
#pragma once

#include "common/error.h"
#include "core/kernel/command.h"
#include "core/kernel/handler.h"

namespace allot {

// - CreateAsset: adds the asset, not retired and with no changes of estimate. Refuses invalid_id,
//   already_exists (a taken id), limit_exceeded (too many assets, or nodes in it), not_found (an
//   unknown node), conflict (a node already in an asset), invalid_argument or overflow (a bad field
//   or amount).
// - ChangeAssetEstimate: adds the change of estimate to the asset, replacing one from the same
//   month. Refuses not_found, conflict (a retired asset), overflow, invalid_argument (a bad life or
//   salvage, or a start not at a month's start, not after the first month in service, or before the
//   last change).
// - RetireAsset: retires the asset at `retired_ms` (0: now) with its proceeds. Refuses not_found,
//   conflict (retired already), invalid_argument (before it entered service, negative proceeds),
//   overflow.
// - SetSite: sets the PUE and colocation price given for the region, making its site where it has
//   none. Refuses invalid_argument (a bad region, a PUE outside 1.0 to 5.0, a negative price),
//   overflow.
// - AddSiteRate: adds a step to the region's energy price or grid intensity (making its site where
//   it has none), replacing a step at the same time. Refuses invalid_argument (a bad region, a
//   negative value, a step in the past or before the last), limit_exceeded (too many steps),
//   overflow.
// - AddFixedCost: adds the fixed cost, from this month where it names none. Refuses invalid_id,
//   already_exists (a taken id), limit_exceeded (too many fixed costs), overflow, invalid_argument
//   (a bad name or region, an amount of zero or less, bounds off a month's start, an end not after
//   the start).
// - DeleteFixedCost: marks the fixed cost deleted now (its row stays, for the books). Refuses
//   not_found where there is no live one.
// - SetRentalPrice: sets (or replaces) the provider's price per GPU-hour of a catalog GPU model.
//   Refuses invalid_argument (a bad provider, a model not in the catalog, a price of zero or less),
//   overflow.
ALLOT_HANDLERS(CreateAsset, ChangeAssetEstimate, RetireAsset, SetSite, AddSiteRate, AddFixedCost,
               DeleteFixedCost, SetRentalPrice);

// The heartbeat's step, before its workload reports are applied: each GPU's energy since its last
// reading (a lower reading than the last is a counter that restarted from zero: all of it is new)
// goes to the node's hour, and is shared by milli among the instances that were running on the
// GPU, with its carbon at the region's PUE and grid intensity now.
void meter_energy(Draft& draft, const NodeHeartbeat& beat, TimeMs now_ms);

// The micrograms CO2e of `energy_mj` at a PUE (1,000 = 1.0) and an intensity in g per kWh.
int64_t carbon_ug(int64_t energy_mj, int64_t pue_milli, int64_t g_per_kwh);

void put(State& state, const finance::Asset& asset);
void put(State& state, const Site& site);
void put(State& state, const FixedCost& cost);
void put(State& state, const RentalPrice& price);
void put(State& state, const NodeEnergy& energy);

}  // namespace allot
