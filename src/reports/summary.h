// What an operator reads off a month's P&L: the rows summed per node, pool, GPU model, region or
// the whole cloud, with utilisation, idle time and its cost, the price realised per GPU-hour,
// break-even utilisation, payback, a what-if on price or utilisation, and owning against renting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/pnl.h"

namespace allot::finance {

enum class GroupBy { kNode, kPool, kModel, kRegion, kTotal };

std::optional<GroupBy> parse_group_by(std::string_view name);

// A price or utilisation changed, to see what the month would have made. Utilisation is in parts
// per million of the available GPU time; empty: as it was. The price factor multiplies the price
// realised (1,000,000: unchanged).
struct WhatIf {
  int64_t price_factor_ppm = 1'000'000;
  std::optional<int64_t> utilisation_ppm;

  bool changes() const { return price_factor_ppm != 1'000'000 || utilisation_ppm.has_value(); }
};

struct Group {
  std::string key;  // The node's name, the pool, the model, the region, or "total".
  int nodes = 0;
  NodeMonth sums;  // Every amount summed; the naming fields of its first node.

  int64_t utilisation_ppm = 0;  // Allocated over available GPU time.
  int64_t idle_gpu_ms = 0;
  int64_t idle_cost_micros = 0;  // The costs in proportion to the idle share of the GPU time.
  // Revenue per GPU-hour allocated; when nothing was allocated, the catalog's on-demand price for
  // the group's model and region now (0 when there is none).
  int64_t price_micros_per_gpu_hour = 0;
  // The utilisation at which that price covers the month's costs; nullopt without a price.
  std::optional<int64_t> break_even_ppm;
  // The what-if, when asked: revenue and margin at the changed price or utilisation (power moves
  // with utilisation, the other costs stay).
  std::optional<int64_t> what_if_revenue_micros;
  std::optional<int64_t> what_if_margin_micros;
};

// The P&L's rows summed by `by`, in key order, with the derived figures at `now_ms`.
std::vector<Group> group(const State& state, const MonthPnl& pnl, GroupBy by, const WhatIf& what_if,
                         TimeMs now_ms);

// When an asset's cash margin (revenue less power, colocation, other costs, interest and lease,
// from its first month in service through `month_ms`) pays back its cost.
struct Payback {
  std::string asset_id;
  std::string name;
  int64_t cost_micros = 0;
  int64_t recovered_micros = 0;  // The cash margin so far.
  int64_t last_month_margin_micros = 0;
  // The month it paid back, or, when not yet, the month it will at the last month's margin;
  // nullopt when that margin is not positive.
  std::optional<TimeMs> payback_month_ms;
  bool projected = false;
};

[[nodiscard]] Result<std::vector<Payback>> payback(const State& state, TimeMs month_ms,
                                                   TimeMs now_ms);

// Owning against renting, per GPU model: the month's costs of the owned GPUs against what the
// GPU-hours used (and the GPU-hours available) would cost at each provider's list price.
struct RentQuote {
  std::string provider;
  int64_t micros_per_gpu_hour = 0;
  int64_t used_micros = 0;      // The allocated GPU-hours at this price.
  int64_t capacity_micros = 0;  // The available GPU-hours at this price.
};

struct BuyOrRent {
  std::string gpu_model;
  int64_t owned_costs_micros = 0;
  int64_t allocated_gpu_ms = 0;
  int64_t available_gpu_ms = 0;
  int64_t owned_micros_per_used_gpu_hour = 0;  // 0 when nothing was used.
  std::vector<RentQuote> quotes;               // Cheapest first.
};

std::vector<BuyOrRent> buy_or_rent(const State& state, const MonthPnl& pnl);

}  // namespace allot::finance
