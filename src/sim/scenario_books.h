// The scenario's operator's books (scenario_books.cc): sites, assets, fixed costs, rental prices,
// and the events that change them, read with the same field-naming errors as the rest.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "sim/scenario.h"
#include "sim/scenario_fields.h"

namespace allot::sim {

// Reads the top-level sites, assets, fixed_costs and rental_prices; the nodes are read already, so
// that an asset's nodes can be checked against them.
[[nodiscard]] Status parse_books(const nlohmann::json& doc, Scenario& s);

// Reads an event of the books (power_price, carbon, retire, change_estimate) into `e`; nullopt
// when `type` is none of them.
[[nodiscard]] std::optional<Result<ScenarioEvent>> books_event_at(const Fields& f,
                                                                  std::string_view type,
                                                                  ScenarioEvent e);

// Every event that names an asset names one of the scenario's.
[[nodiscard]] Status check_books_references(const Scenario& s);

}  // namespace allot::sim
