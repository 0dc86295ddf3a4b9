// The operator's books in the core: the commands that keep assets, sites, fixed costs and rental
// prices, and the heartbeat's step that meters energy and carbon from the GPUs' counters.
#pragma once

#include "common/error.h"
#include "core/cluster_ops.h"
#include "core/command.h"

namespace allot {

[[nodiscard]] Result<Rows> create_asset(const State& state, const CreateAsset& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> change_asset_estimate(const State& state, const ChangeAssetEstimate& c);
[[nodiscard]] Result<Rows> retire_asset(const State& state, const RetireAsset& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> set_site(const State& state, const SetSite& c);
[[nodiscard]] Result<Rows> add_site_rate(const State& state, const AddSiteRate& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> add_fixed_cost(const State& state, const AddFixedCost& c, TimeMs now_ms);
[[nodiscard]] Result<Rows> delete_fixed_cost(const State& state, const DeleteFixedCost& c,
                                             TimeMs now_ms);
[[nodiscard]] Result<Rows> set_rental_price(const State& state, const SetRentalPrice& c,
                                            TimeMs now_ms);

// The heartbeat's step, before its workload reports are applied: each GPU's energy since its last
// reading (a lower reading than the last is a counter that restarted from zero: all of it is new)
// goes to the node's hour, and is shared by milli among the instances that were running on the
// GPU, with its carbon at the region's PUE and grid intensity now.
void meter_energy(Draft& draft, const NodeHeartbeat& beat, TimeMs now_ms);

// The micrograms CO2e of `energy_mj` at a PUE (1,000 = 1.0) and an intensity in g per kWh.
int64_t carbon_ug(int64_t energy_mj, int64_t pue_milli, int64_t g_per_kwh);

}  // namespace allot
