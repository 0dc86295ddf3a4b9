// The scenario's operator's books (scenario_books.cc): sites, assets, fixed costs, rental prices,
// and the events that change them, read with the same field-naming errors as the rest.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// The books as the core's commands, to apply in order before any work, each named by its item
// ("assets[1] (oregon h200)"): sites and their rates, assets (their ids drawn from `next_id` and
// kept in `asset_ids` by name; their nodes named by `node_ids`), fixed costs, rental prices.
std::vector<std::pair<Command, std::string>> books_commands(
    const Scenario& s, const std::function<std::string(std::string_view)>& next_id,
    const std::map<std::string, std::string>& node_ids,
    std::map<std::string, std::string>& asset_ids);

// The command of a books event (power_price, carbon, retire, change_estimate) at `at_ms`;
// nullopt for any other event.
std::optional<Command> books_event_command(const ScenarioEvent& e, TimeMs at_ms,
                                           const std::map<std::string, std::string>& asset_ids);

// Every event that names an asset names one of the scenario's.
[[nodiscard]] Status check_books_references(const Scenario& s);

}  // namespace allot::sim
