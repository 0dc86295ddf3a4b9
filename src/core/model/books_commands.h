// The books domain's commands: the operator's assets, sites, fixed costs and rental prices.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/type_list.h"
#include "core/model/books.h"

namespace allot {

// The operator's books (core/books/books.cc). A new asset: a node or a batch of nodes, its cost,
// depreciation and financing.
struct CreateAsset {
  finance::Asset asset;
};

// A change of estimate, from the month `change.from_month_ms` holds on.
struct ChangeAssetEstimate {
  std::string asset_id;
  finance::EstimateChange change;
};

struct RetireAsset {
  std::string asset_id;
  TimeMs retired_ms = 0;  // 0: now.
  int64_t proceeds_micros = 0;
};

// A region's PUE and colocation price; a field left empty keeps what it was.
struct SetSite {
  std::string region;
  std::optional<int64_t> pue_milli;
  std::optional<int64_t> colocation_micros_per_kw_month;
};

enum class SiteRate { kPowerPrice, kCarbonIntensity };

// A new step of a region's energy price or grid intensity, from `point.from_ms` (0: now) on;
// never dated in the past, so what was metered stays true.
struct AddSiteRate {
  std::string region;
  SiteRate rate = SiteRate::kPowerPrice;
  RatePoint point;
};

struct AddFixedCost {
  FixedCost cost;
};

struct DeleteFixedCost {
  std::string id;
};

struct SetRentalPrice {
  RentalPrice price;
};

using BooksCommands = TypeList<CreateAsset, ChangeAssetEstimate, RetireAsset, SetSite, AddSiteRate,
                               AddFixedCost, DeleteFixedCost, SetRentalPrice>;
using BooksRows = TypeList<finance::Asset, Site, FixedCost, RentalPrice, NodeEnergy>;

}  // namespace allot
