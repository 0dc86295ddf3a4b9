// The operator's books in the core: assets (finance/asset.h), what each region's power, cooling
// and colocation cost, fixed monthly costs and how they are shared out, public cloud list prices
// to compare renting with owning, and the energy each node's GPUs used, hour by hour.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "finance/asset.h"

namespace allot {

// One step of a value that changes over time: it holds from from_ms until the next step.
struct RatePoint {
  TimeMs from_ms = 0;
  int64_t value = 0;

  bool operator==(const RatePoint&) const = default;
};

// The value in force at `at_ms`: the last step at or before it; 0 before the first.
int64_t value_at(const std::vector<RatePoint>& steps, TimeMs at_ms);

// What running servers in one region costs besides the servers: PUE (facility energy over IT
// energy, 1,000 = 1.0), colocation per kW of contracted power per month, the energy price per kWh
// and the grid's carbon intensity (gCO2e per kWh), the last two as series over time.
struct Site {
  std::string region;
  int64_t pue_milli = 1000;
  int64_t colocation_micros_per_kw_month = 0;
  std::vector<RatePoint> power_micros_per_kwh;
  std::vector<RatePoint> carbon_g_per_kwh;

  bool operator==(const Site&) const = default;
};

// How a fixed cost is shared among the nodes it covers: equally, by GPUs, by the purchase cost
// of their assets, or by their contracted power.
enum class AllocationRule { kPerNode, kPerGpu, kByCost, kByPower };

std::string_view allocation_rule_name(AllocationRule rule);
std::optional<AllocationRule> parse_allocation_rule(std::string_view name);

// A fixed monthly cost (staff, network, insurance...) from from_month_ms to until_month_ms
// (exclusive; 0: open), over the nodes of `region` (empty: every node).
struct FixedCost {
  std::string id;  // "fxc_" + 16 hex
  std::string name;
  int64_t monthly_micros = 0;
  std::string region;
  AllocationRule rule = AllocationRule::kPerNode;
  TimeMs from_month_ms = 0;
  TimeMs until_month_ms = 0;
  TimeMs created_at_ms = 0;
  TimeMs deleted_at_ms = 0;

  bool operator==(const FixedCost&) const = default;
};

// What a public cloud asks for one GPU-hour of a model, for the buy-or-rent comparison.
struct RentalPrice {
  std::string provider;
  std::string gpu_model;
  int64_t micros_per_gpu_hour = 0;
  TimeMs updated_at_ms = 0;

  bool operator==(const RentalPrice&) const = default;
  std::string key() const { return provider + "/" + gpu_model; }
};

// The energy a node's GPUs used within one hour (from their counters' deltas).
struct NodeEnergy {
  std::string node_id;
  TimeMs hour_ms = 0;
  int64_t energy_mj = 0;

  bool operator==(const NodeEnergy&) const = default;
};

struct Books {
  std::map<std::string, finance::Asset> assets;
  std::map<std::string, Site> sites;  // By region.
  std::map<std::string, FixedCost> fixed_costs;
  std::map<std::string, RentalPrice> rental_prices;  // By RentalPrice::key().
  // Per node, per hour: energy in mJ.
  std::map<std::string, std::map<TimeMs, int64_t>> energy;

  const finance::Asset* asset_of_node(const std::string& node_id) const;
  const Site* site(const std::string& region) const;
};

}  // namespace allot
