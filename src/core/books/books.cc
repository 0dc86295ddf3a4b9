// The operator's books: assets, sites, fixed costs and rental prices. Every check runs before
// anything changes, so a refused command leaves the books as they were.
#include "core/books/books.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/limits.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/lookups.h"
#include "core/kernel/slices/find.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

Status check_amount(std::string_view field, int64_t micros) {
  if (micros < 0) return fail(ErrorCode::kInvalidArgument, fmt::format("{} is negative", field));
  if (micros > limits::kMaxMoneyMicros) {
    return fail(ErrorCode::kOverflow, fmt::format("{} is larger than Allot keeps", field));
  }
  return {};
}

Status check_months(std::string_view field, int months) {
  if (months <= 0) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("{} must be at least one month", field));
  }
  if (months > limits::kMaxLifeMonths) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is over {} months", field, limits::kMaxLifeMonths));
  }
  return {};
}

Status check_financing(const finance::Financing& f) {
  using finance::FinancingKind;
  if (f.start_month_ms < 0)
    return fail(ErrorCode::kInvalidArgument, "financing starts before 1970");
  switch (f.kind) {
    case FinancingKind::kCash:
      if (f.principal_micros != 0 || f.term_months != 0 || f.monthly_payment_micros != 0 ||
          f.annual_rate_ppm != 0) {
        return fail(ErrorCode::kInvalidArgument, "cash financing takes no loan or lease terms");
      }
      return {};
    case FinancingKind::kLoan:
      if (auto ok = check_amount("the loan's principal", f.principal_micros); !ok) return ok;
      if (f.principal_micros == 0)
        return fail(ErrorCode::kInvalidArgument, "a loan needs a principal");
      if (f.annual_rate_ppm < 0 || f.annual_rate_ppm > limits::kMaxAnnualRatePpm) {
        return fail(ErrorCode::kInvalidArgument, "a loan's annual rate is between 0 and 100 %");
      }
      if (f.monthly_payment_micros != 0) {
        return fail(ErrorCode::kInvalidArgument, "a loan's payment follows from its terms");
      }
      return check_months("the loan's term", f.term_months);
    case FinancingKind::kLease:
      if (auto ok = check_amount("the lease's monthly payment", f.monthly_payment_micros); !ok) {
        return ok;
      }
      if (f.monthly_payment_micros == 0) {
        return fail(ErrorCode::kInvalidArgument, "a lease needs a monthly payment");
      }
      if (f.principal_micros != 0 || f.annual_rate_ppm != 0) {
        return fail(ErrorCode::kInvalidArgument, "a lease takes no principal or rate");
      }
      return check_months("the lease's term", f.term_months);
  }
  return {};
}

Status check_estimate(int life_months, int64_t salvage_micros, int64_t cost_micros) {
  if (auto ok = check_months("the useful life", life_months); !ok) return ok;
  if (auto ok = check_amount("the salvage value", salvage_micros); !ok) return ok;
  if (salvage_micros > cost_micros) {
    return fail(ErrorCode::kInvalidArgument, "the salvage value is above the cost");
  }
  return {};
}

Status check_nodes(const State& state, const finance::Asset& asset) {
  if (asset.node_ids.empty()) return fail(ErrorCode::kInvalidArgument, "an asset needs a node");
  if (asset.node_ids.size() > limits::kMaxNodesPerAsset) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("an asset holds at most {} nodes", limits::kMaxNodesPerAsset));
  }
  std::set<std::string> seen;
  for (const std::string& id : asset.node_ids) {
    if (state.node(id) == nullptr) return std::unexpected(not_found("node", id));
    if (!seen.insert(id).second) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("node {} is named twice", id));
    }
    if (const finance::Asset* other = state.books.asset_of_node(id); other != nullptr) {
      return fail(ErrorCode::kConflict,
                  fmt::format("node {} is already in asset {} ({})", id, other->id, other->name));
    }
  }
  return {};
}

Status check_asset(const State& state, const finance::Asset& a) {
  if (auto ok = check_id("asset id", a.id, "ast"); !ok) return ok;
  if (state.books.assets.contains(a.id)) {
    return fail(ErrorCode::kAlreadyExists, fmt::format("asset {} exists", a.id));
  }
  if (state.books.assets.size() >= limits::kMaxAssets) {
    return fail(ErrorCode::kLimitExceeded, fmt::format("at most {} assets", limits::kMaxAssets));
  }
  if (auto ok = check_name("name", a.name); !ok) return ok;
  if (auto ok = check_amount("the cost", a.cost_micros); !ok) return ok;
  if (auto ok = check_estimate(a.life_months, a.salvage_micros, a.cost_micros); !ok) return ok;
  if (a.in_service_ms <= 0) return fail(ErrorCode::kInvalidArgument, "an asset needs in_service");
  if (a.method == finance::Method::kDecliningBalance &&
      (a.declining_factor_milli <= 0 ||
       a.declining_factor_milli > limits::kMaxDecliningFactorMilli)) {
    return fail(ErrorCode::kInvalidArgument, "the declining factor is above 0 and at most 10");
  }
  if (a.power_kw_milli < 0) return fail(ErrorCode::kInvalidArgument, "the power is negative");
  if (auto ok = check_financing(a.financing); !ok) return ok;
  return check_nodes(state, a);
}

Result<const finance::Asset*> live_asset(const State& state, const std::string& id) {
  auto it = state.books.assets.find(id);
  if (it == state.books.assets.end()) return std::unexpected(not_found("asset", id));
  if (it->second.retired_ms != 0) {
    return fail(ErrorCode::kConflict, fmt::format("asset {} is retired", id));
  }
  return &it->second;
}

}  // namespace

Result<Rows> apply(const State& state, const CreateAsset& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_asset(state, c.asset); !ok) return std::unexpected(ok.error());
  finance::Asset asset = c.asset;
  asset.changes.clear();
  asset.retired_ms = 0;
  asset.retirement_proceeds_micros = 0;
  asset.created_at_ms = now_ms;
  return Rows{asset};
}

Result<Rows> apply(const State& state, const ChangeAssetEstimate& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  auto found = live_asset(state, c.asset_id);
  if (!found) return std::unexpected(found.error());
  finance::Asset asset = **found;
  const finance::EstimateChange& change = c.change;
  if (auto ok = check_estimate(change.life_months, change.salvage_micros, asset.cost_micros); !ok) {
    return std::unexpected(ok.error());
  }
  if (change.from_month_ms != month_start(change.from_month_ms)) {
    return fail(ErrorCode::kInvalidArgument, "a change of estimate starts at a month's start");
  }
  if (change.from_month_ms <= month_start(asset.in_service_ms)) {
    return fail(ErrorCode::kInvalidArgument,
                "a change of estimate starts after the asset's first month in service");
  }
  if (!asset.changes.empty() && change.from_month_ms < asset.changes.back().from_month_ms) {
    return fail(ErrorCode::kInvalidArgument,
                "a change of estimate cannot start before the last change");
  }
  if (!asset.changes.empty() && asset.changes.back().from_month_ms == change.from_month_ms) {
    asset.changes.back() = change;
  } else {
    asset.changes.push_back(change);
  }
  return Rows{asset};
}

Result<Rows> apply(const State& state, const RetireAsset& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto found = live_asset(state, c.asset_id);
  if (!found) return std::unexpected(found.error());
  finance::Asset asset = **found;
  const TimeMs at_ms = c.retired_ms == 0 ? now_ms : c.retired_ms;
  if (at_ms < asset.in_service_ms) {
    return fail(ErrorCode::kInvalidArgument, "an asset cannot retire before it entered service");
  }
  if (auto ok = check_amount("the proceeds", c.proceeds_micros); !ok) {
    return std::unexpected(ok.error());
  }
  asset.retired_ms = at_ms;
  asset.retirement_proceeds_micros = c.proceeds_micros;
  return Rows{asset};
}

Result<Rows> apply(const State& state, const SetSite& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  if (auto ok = check_name("region", c.region); !ok) return std::unexpected(ok.error());
  Site site;
  site.region = c.region;
  if (const Site* old = state.books.site(c.region); old != nullptr) site = *old;
  if (c.pue_milli) {
    if (*c.pue_milli < 1000 || *c.pue_milli > limits::kMaxPueMilli) {
      return fail(ErrorCode::kInvalidArgument, "a PUE is between 1.0 and 5.0");
    }
    site.pue_milli = *c.pue_milli;
  }
  if (c.colocation_micros_per_kw_month) {
    if (auto ok = check_amount("the colocation price", *c.colocation_micros_per_kw_month); !ok) {
      return std::unexpected(ok.error());
    }
    site.colocation_micros_per_kw_month = *c.colocation_micros_per_kw_month;
  }
  return Rows{site};
}

Result<Rows> apply(const State& state, const AddSiteRate& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_name("region", c.region); !ok) return std::unexpected(ok.error());
  const bool power = c.rate == SiteRate::kPowerPrice;
  if (auto ok = check_amount(power ? "the energy price" : "the grid intensity", c.point.value);
      !ok) {
    return std::unexpected(ok.error());
  }
  RatePoint point = c.point;
  if (point.from_ms == 0) point.from_ms = now_ms;
  if (point.from_ms < now_ms) {
    return fail(ErrorCode::kInvalidArgument,
                "a rate cannot take effect in the past: what was metered stays as it was");
  }
  Site site;
  site.region = c.region;
  if (const Site* old = state.books.site(c.region); old != nullptr) site = *old;
  std::vector<RatePoint>& steps = power ? site.power_micros_per_kwh : site.carbon_g_per_kwh;
  if (!steps.empty() && steps.back().from_ms > point.from_ms) {
    return fail(ErrorCode::kInvalidArgument, "a rate cannot take effect before the last one");
  }
  if (!steps.empty() && steps.back().from_ms == point.from_ms) {
    steps.back() = point;
  } else {
    if (steps.size() >= limits::kMaxRateSteps) {
      return fail(ErrorCode::kLimitExceeded,
                  fmt::format("at most {} steps", limits::kMaxRateSteps));
    }
    steps.push_back(point);
  }
  return Rows{site};
}

Result<Rows> apply(const State& state, const AddFixedCost& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  FixedCost cost = c.cost;
  if (auto ok = check_id("fixed cost id", cost.id, "fxc"); !ok) return std::unexpected(ok.error());
  if (state.books.fixed_costs.contains(cost.id)) {
    return fail(ErrorCode::kAlreadyExists, fmt::format("fixed cost {} exists", cost.id));
  }
  if (state.books.fixed_costs.size() >= limits::kMaxFixedCosts) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("at most {} fixed costs", limits::kMaxFixedCosts));
  }
  if (auto ok = check_name("name", cost.name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_amount("the monthly amount", cost.monthly_micros); !ok) {
    return std::unexpected(ok.error());
  }
  if (cost.monthly_micros == 0) return fail(ErrorCode::kInvalidArgument, "the amount is zero");
  if (!cost.region.empty()) {
    if (auto ok = check_name("region", cost.region); !ok) return std::unexpected(ok.error());
  }
  if (cost.from_month_ms == 0) cost.from_month_ms = month_start(now_ms);
  if (cost.from_month_ms != month_start(cost.from_month_ms) ||
      (cost.until_month_ms != 0 && cost.until_month_ms != month_start(cost.until_month_ms))) {
    return fail(ErrorCode::kInvalidArgument, "a fixed cost starts and ends at a month's start");
  }
  if (cost.until_month_ms != 0 && cost.until_month_ms <= cost.from_month_ms) {
    return fail(ErrorCode::kInvalidArgument, "a fixed cost ends after it starts");
  }
  cost.created_at_ms = now_ms;
  cost.deleted_at_ms = 0;
  return Rows{cost};
}

Result<Rows> apply(const State& state, const DeleteFixedCost& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return delete_row(find_by_id(state.books.fixed_costs, c.id), "fixed cost", c.id, now_ms);
}

Result<Rows> apply(const State& /*state*/, const SetRentalPrice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  RentalPrice price = c.price;
  if (auto ok = check_name("provider", price.provider); !ok) return std::unexpected(ok.error());
  if (!is_catalog_gpu_model(price.gpu_model)) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("a rental price needs a GPU model of the catalog; not '{}'", price.gpu_model));
  }
  if (auto ok = check_amount("the price", price.micros_per_gpu_hour); !ok) {
    return std::unexpected(ok.error());
  }
  if (price.micros_per_gpu_hour == 0) return fail(ErrorCode::kInvalidArgument, "the price is zero");
  price.updated_at_ms = now_ms;
  return Rows{price};
}

void put(State& state, const finance::Asset& asset) { state.books.assets[asset.id] = asset; }

void put(State& state, const Site& site) { state.books.sites[site.region] = site; }

void put(State& state, const FixedCost& cost) { state.books.fixed_costs[cost.id] = cost; }

void put(State& state, const RentalPrice& price) { state.books.rental_prices[price.key()] = price; }

void put(State& state, const NodeEnergy& energy) {
  state.books.energy[energy.node_id][energy.hour_ms] = energy.energy_mj;
}

}  // namespace allot
