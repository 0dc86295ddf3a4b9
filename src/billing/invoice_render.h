// An invoice as JSON (amounts as decimal strings), CSV (one row per line, then totals) and a
// printable, self-contained HTML page. Names of the tenant and projects come from the state;
// every piece of text from users is escaped for the format it goes into.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/state.h"

namespace allot::billing {

// GPU milli-seconds as GPU-hours with six decimals, rounded half up: 45,000,000 -> "12.500000".
std::string gpu_hours_text(int64_t gpu_milli_seconds);
// Energy as kWh with six decimals (whole mWh, rounded half up): 3,600,000,000 mJ -> "1.000000".
std::string energy_kwh_text(int64_t energy_mj);
// Carbon as kg CO2e with six decimals (whole mg, rounded half up): 1,500 µg -> "0.000002".
std::string carbon_kg_text(int64_t carbon_ug);

nlohmann::json invoice_json(const Invoice& invoice);
nlohmann::json credit_note_json(const CreditNote& note);

std::string invoice_csv(const State& state, const Invoice& invoice);
std::string invoice_html(const State& state, const Invoice& invoice);

// Text made safe for HTML element content and attribute values.
std::string html_escape(std::string_view text);
// One CSV field: quoted when it holds a comma, quote or line break; a leading =, +, - or @ is
// prefixed with ' so that spreadsheets do not run it as a formula.
std::string csv_field(std::string_view text);

}  // namespace allot::billing
