// The operator's books in the core: the commands that keep assets, sites, fixed costs and rental
// prices, and the heartbeat's step that meters energy and carbon from the GPUs' counters.
#pragma once

#include "common/error.h"
#include "core/kernel/command.h"
#include "core/kernel/handler.h"

namespace allot {

[[nodiscard]] Handler<CreateAsset> apply;
[[nodiscard]] Handler<ChangeAssetEstimate> apply;
[[nodiscard]] Handler<RetireAsset> apply;
[[nodiscard]] Handler<SetSite> apply;
[[nodiscard]] Handler<AddSiteRate> apply;
[[nodiscard]] Handler<AddFixedCost> apply;
[[nodiscard]] Handler<DeleteFixedCost> apply;
[[nodiscard]] Handler<SetRentalPrice> apply;

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
