// How the CLI prints: aligned tables for people (the default), JSON for scripts.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace allot::cli {

// How a column shows its numbers: as they are, or thousandths as a decimal (milli-GPUs as GPUs:
// 16000 as "16", 250 as "0.25").
enum class Unit { kAsIs, kThousandths };

struct Column {
  std::string header;  // Printed upper-case.
  std::string field;   // The JSON field shown.
  Unit unit = Unit::kAsIs;
};

// Thousandths as a decimal with no trailing zeros: 16000 as "16", 7750 as "7.75", -500 as "-0.5".
std::string thousandths(int64_t value);

// Prints one row per object in `items`, the columns aligned. Null shows as "-", a list as "a, b".
void print_table(std::ostream& out, const nlohmann::json& items,
                 const std::vector<Column>& columns);

// Prints one object as FIELD: value lines (a nested one as PARENT.FIELD lines), then each list of
// records in it (an instance's events, an asset's schedules) as a table under its name.
void print_object(std::ostream& out, const nlohmann::json& object);

}  // namespace allot::cli
