// Sums and derived figures of a month's P&L (see summary.h). Ratios are integers in parts per
// million; money stays in micro-units, products in 128 bits.
#include "reports/summary.h"

#include <algorithm>
#include <map>

#include "common/enum_names.h"
#include "common/int128.h"

namespace allot::finance {
namespace {

constexpr int64_t kMsPerHour = 3'600'000;
constexpr int64_t kPpm = 1'000'000;
// A payback further out than a century is no payback.
constexpr int kMaxPaybackMonths = 1200;

int64_t ratio(Int128 numerator, Int128 denominator) {
  return denominator == 0 ? 0 : static_cast<int64_t>(numerator / denominator);
}

void add_into(NodeMonth& sum, const NodeMonth& row) {
  sum.revenue_micros += row.revenue_micros;
  sum.depreciation_micros += row.depreciation_micros;
  sum.retirement_loss_micros += row.retirement_loss_micros;
  sum.interest_micros += row.interest_micros;
  sum.lease_micros += row.lease_micros;
  sum.power_micros += row.power_micros;
  sum.colocation_micros += row.colocation_micros;
  sum.other_micros += row.other_micros;
  sum.principal_micros += row.principal_micros;
  sum.energy_mj += row.energy_mj;
  sum.carbon_ug += row.carbon_ug;
  sum.available_gpu_ms += row.available_gpu_ms;
  sum.allocated_gpu_ms += row.allocated_gpu_ms;
  sum.gpus += row.gpus;
}

std::string key_of(const NodeMonth& row, GroupBy by) {
  switch (by) {
    case GroupBy::kNode:
      return row.node_name;
    case GroupBy::kPool:
      return row.pool;
    case GroupBy::kModel:
      return row.gpu_model;
    case GroupBy::kRegion:
      return row.region;
    case GroupBy::kTotal:
      break;
  }
  return "total";
}

int64_t list_price(const State& state, const NodeMonth& row, TimeMs now_ms) {
  const meter::Price* price =
      state.prices.at(meter::PriceKey{row.gpu_model, row.region, PriceClass::kOnDemand}, now_ms);
  return price != nullptr ? price->gpu_hour_micros : 0;
}

// Utilisation, idle time and cost, price, break-even and the what-if of one group.
void derive(const State& state, Group& g, const WhatIf& what_if, TimeMs now_ms) {
  const NodeMonth& s = g.sums;
  const int64_t costs = s.costs_micros();
  g.utilisation_ppm = ratio(Int128{s.allocated_gpu_ms} * kPpm, s.available_gpu_ms);
  g.idle_gpu_ms = std::max<int64_t>(0, s.available_gpu_ms - s.allocated_gpu_ms);
  g.idle_cost_micros = ratio(Int128{costs} * g.idle_gpu_ms, s.available_gpu_ms);
  g.price_micros_per_gpu_hour =
      s.allocated_gpu_ms > 0 ? ratio(Int128{s.revenue_micros} * kMsPerHour, s.allocated_gpu_ms)
                             : list_price(state, s, now_ms);
  const Int128 full_revenue = Int128{g.price_micros_per_gpu_hour} * s.available_gpu_ms;
  if (full_revenue > 0) {
    g.break_even_ppm = ratio(Int128{costs} * kPpm * kMsPerHour, full_revenue);
  }
  if (!what_if.changes()) return;
  const int64_t utilisation = what_if.utilisation_ppm.value_or(g.utilisation_ppm);
  int64_t revenue = 0;
  int64_t power = s.power_micros;
  if (!what_if.utilisation_ppm && s.allocated_gpu_ms > 0) {
    revenue = ratio(Int128{s.revenue_micros} * what_if.price_factor_ppm, kPpm);
  } else {
    revenue = ratio(full_revenue * utilisation / kPpm * what_if.price_factor_ppm,
                    Int128{kPpm} * kMsPerHour);
  }
  // GPU energy follows the work on them; without any work measured, power stays as it was.
  if (what_if.utilisation_ppm && g.utilisation_ppm > 0) {
    power = ratio(Int128{s.power_micros} * utilisation, g.utilisation_ppm);
  }
  g.what_if_revenue_micros = revenue;
  g.what_if_margin_micros = revenue - (costs - s.power_micros + power);
}

int64_t cash_margin(const NodeMonth& row) {
  return row.revenue_micros - row.power_micros - row.colocation_micros - row.other_micros -
         row.interest_micros - row.lease_micros;
}

TimeMs add_months(TimeMs month_ms, int64_t months) {
  for (int64_t i = 0; i < months; ++i) month_ms = next_month_start(month_ms);
  return month_ms;
}

}  // namespace

std::optional<GroupBy> parse_group_by(std::string_view name) {
  constexpr EnumNames<GroupBy, 5> kNames{{"node", "pool", "model", "region", "total"}};
  return kNames.parse(name);
}

std::vector<Group> group(const State& state, const MonthPnl& pnl, GroupBy by, const WhatIf& what_if,
                         TimeMs now_ms) {
  std::map<std::string, Group> groups;
  for (const NodeMonth& row : pnl.nodes) {
    Group& g = groups[key_of(row, by)];
    if (g.nodes++ == 0) {
      g.key = key_of(row, by);
      g.sums = row;
    } else {
      add_into(g.sums, row);
    }
  }
  std::vector<Group> out;
  for (auto& [key, g] : groups) {
    derive(state, g, what_if, now_ms);
    out.push_back(std::move(g));
  }
  return out;
}

Result<std::vector<Payback>> payback(const State& state, TimeMs month_ms, TimeMs now_ms) {
  std::vector<Payback> out;
  std::map<TimeMs, MonthPnl> months;  // Each month's P&L once, shared by every asset.
  for (const auto& [id, asset] : state.books.assets) {
    Payback p{.asset_id = id, .name = asset.name, .cost_micros = asset.cost_micros};
    for (TimeMs m = month_start(asset.in_service_ms); m <= month_ms; m = next_month_start(m)) {
      if (!months.contains(m)) {
        auto pnl = month_pnl(state, m, now_ms);
        if (!pnl) return std::unexpected(pnl.error());
        months.emplace(m, std::move(*pnl));
      }
      p.last_month_margin_micros = 0;
      for (const NodeMonth& row : months.at(m).nodes) {
        if (row.asset_id == id) p.last_month_margin_micros += cash_margin(row);
      }
      p.recovered_micros += p.last_month_margin_micros;
      if (!p.payback_month_ms && p.recovered_micros >= p.cost_micros) p.payback_month_ms = m;
    }
    if (!p.payback_month_ms && p.last_month_margin_micros > 0) {
      const int64_t left = p.cost_micros - p.recovered_micros;
      const int64_t months_left =
          (left + p.last_month_margin_micros - 1) / p.last_month_margin_micros;
      if (months_left <= kMaxPaybackMonths) {
        p.payback_month_ms = add_months(month_ms, months_left);
        p.projected = true;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<BuyOrRent> buy_or_rent(const State& state, const MonthPnl& pnl) {
  std::map<std::string, BuyOrRent> models;
  for (const NodeMonth& row : pnl.nodes) {
    BuyOrRent& b = models[row.gpu_model];
    b.gpu_model = row.gpu_model;
    b.owned_costs_micros += row.costs_micros();
    b.allocated_gpu_ms += row.allocated_gpu_ms;
    b.available_gpu_ms += row.available_gpu_ms;
  }
  std::vector<BuyOrRent> out;
  for (auto& [model, b] : models) {
    b.owned_micros_per_used_gpu_hour =
        ratio(Int128{b.owned_costs_micros} * kMsPerHour, b.allocated_gpu_ms);
    for (const auto& [key, price] : state.books.rental_prices) {
      if (price.gpu_model != model) continue;
      b.quotes.push_back(RentQuote{
          .provider = price.provider,
          .micros_per_gpu_hour = price.micros_per_gpu_hour,
          .used_micros = ratio(Int128{price.micros_per_gpu_hour} * b.allocated_gpu_ms, kMsPerHour),
          .capacity_micros =
              ratio(Int128{price.micros_per_gpu_hour} * b.available_gpu_ms, kMsPerHour)});
    }
    std::ranges::sort(b.quotes, [](const RentQuote& x, const RentQuote& y) {
      return std::tie(x.micros_per_gpu_hour, x.provider) <
             std::tie(y.micros_per_gpu_hour, y.provider);
    });
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace allot::finance
