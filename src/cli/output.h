// How the CLI prints: aligned tables for people (the default), JSON for scripts.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace allot::cli {

struct Column {
  std::string header;  // Printed upper-case.
  std::string field;   // The JSON field shown.
};

// Prints one row per object in `items`, the columns aligned. Null shows as "-", a list as "a, b".
void print_table(std::ostream& out, const nlohmann::json& items,
                 const std::vector<Column>& columns);

// Prints one object as FIELD: value lines (a nested one as PARENT.FIELD lines), then each list of
// records in it (an instance's events, an asset's schedules) as a table under its name.
void print_object(std::ostream& out, const nlohmann::json& object);

}  // namespace allot::cli
