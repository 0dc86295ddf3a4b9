// The operator's profit and loss, per node and month, from the core's state: revenue from the
// tenants' usage (the same charges the invoices and the ledger hold), the books' costs, energy,
// carbon and how much of the GPUs' time was sold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/kernel/state.h"

namespace allot::finance {

struct NodeMonth {
  std::string node_id;
  std::string node_name;
  std::string region;
  std::string pool;       // The node's "pool" label; "default" without one.
  std::string gpu_model;  // Its first GPU's model.
  int gpus = 0;
  std::string asset_id;  // Empty: the node is in no asset (no depreciation, financing, colocation).

  // Usage charged within the month on this node: charge_between over the month for every instance
  // that ran here, exactly as the invoices charge it.
  int64_t revenue_micros = 0;
  int64_t depreciation_micros = 0;
  int64_t retirement_loss_micros = 0;  // Negative: a gain on retirement.
  int64_t interest_micros = 0;
  int64_t lease_micros = 0;
  int64_t power_micros = 0;  // Energy x PUE x the region's price per kWh, hour by hour.
  int64_t colocation_micros = 0;
  int64_t other_micros = 0;      // Its share of the fixed costs.
  int64_t principal_micros = 0;  // Loan principal repaid: cash out, but not a cost.

  int64_t energy_mj = 0;  // The GPUs' energy (IT energy, before PUE).
  int64_t carbon_ug = 0;  // energy x PUE x grid intensity, hour by hour.

  // GPU-milliseconds: the GPUs' time in service within the month (from the later of the month's
  // start, the node's joining and its asset's service start, to the earlier of the month's end,
  // now and retirement), and the part of it that instances held (GPUs x milli / 1,000).
  int64_t available_gpu_ms = 0;
  int64_t allocated_gpu_ms = 0;

  bool operator==(const NodeMonth&) const = default;
  int64_t costs_micros() const;
  int64_t margin_micros() const { return revenue_micros - costs_micros(); }
  // The P&L's lines by the names reports show them under, in their order: revenue, each cost,
  // costs, margin. Every report of a node-month (API, CSV, simulation) lists these.
  std::array<std::pair<std::string_view, int64_t>, 10> lines() const;
};

// While a month runs: what the whole of it comes to if it goes on as it has so far.
struct MonthProjection {
  int64_t net_revenue_micros = 0;  // Revenue less credits so far, at the same rate all month.
  int64_t costs_micros = 0;  // Each accruing cost for the whole month; power at its rate so far.
  int64_t margin_micros = 0;
};

struct MonthPnl {
  TimeMs month_ms = 0;
  // The P&L covers the month up to through_ms: its end, or now while it runs. Month to date, each
  // cost that accrues with time is the part of its month that has passed: an asset's
  // depreciation, interest, lease, colocation and principal repaid, of the asset's month in
  // service; a fixed cost, of the calendar month, shared by the nodes' time in the fleet so far.
  // Revenue, power and carbon are what was metered.
  TimeMs through_ms = 0;
  std::optional<MonthProjection> projection;  // Only while the month runs.
  bool month_to_date() const { return projection.has_value(); }
  std::vector<NodeMonth> nodes;  // In node id order.
  // Promotional credits the month's invoices apply (a contra-revenue at the cloud's level: credits
  // are per tenant, not per node). revenue - credits = the sum of the invoices' totals.
  int64_t credits_micros = 0;
  // The volumes' storage charged within the month, per region, as the invoices charge it. Storage
  // is not a node's: it is revenue of the region, outside the node rows.
  std::map<std::string, int64_t> storage_by_region;
  // The nodes' revenue and the storage's.
  [[nodiscard]] Result<int64_t> revenue_micros() const;
};

// The P&L of the month starting at month_ms, as the state stands at now_ms (a month not over yet
// counts up to now, with its projection). Fails with kInvalidArgument for a moment that is not a
// month's start and kOverflow when a sum leaves int64.
[[nodiscard]] Result<MonthPnl> month_pnl(const State& state, TimeMs month_ms, TimeMs now_ms);

}  // namespace allot::finance
