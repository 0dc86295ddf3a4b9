// The operator's books as JSON documents: how the store keeps assets, sites, fixed costs and
// rental prices (one document per row), and the base of what the API shows.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/books.h"

namespace allot {

nlohmann::json asset_document(const finance::Asset& asset);
nlohmann::json site_document(const Site& site);
nlohmann::json fixed_cost_document(const FixedCost& cost);
nlohmann::json rental_price_document(const RentalPrice& price);

[[nodiscard]] Result<finance::Asset> asset_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<Site> site_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<FixedCost> fixed_cost_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<RentalPrice> rental_price_from_document(const nlohmann::json& doc);

}  // namespace allot
