// An invoice as JSON (amounts as decimal strings of micro-units), CSV (one row per line, then
// totals) and a printable, self-contained HTML page in the currency's minor unit. Names of the
// tenant and projects come from the state; every piece of text from users is escaped for the format
// it goes into.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/kernel/state.h"
#include "reports/currency.h"

namespace allot::billing {

// Who issues the invoices, and on what terms: the deployment's settings (allotd's
// invoice_legal_name, invoice_address, invoice_tax_id, currency, payment_terms_days).
struct Issuer {
  std::string legal_name;
  std::string address;  // Lines separated by "\n".
  std::string tax_id;
  Currency currency{.code = "USD", .exponent = 2};
  int64_t payment_terms_days = 30;
};

// The day an invoice is due: its issue (finalizing) plus the payment terms; 0 for a draft.
TimeMs due_at_ms(const Invoice& invoice, const Issuer& issuer);

// GPU milli-seconds as GPU-hours with six decimals, rounded half up: 45,000,000 -> "12.500000".
std::string gpu_hours_text(int64_t gpu_milli_seconds);
// GB x seconds as GB-hours, with six decimals.
std::string gb_hours_text(int64_t gb_seconds);
// Energy as kWh with six decimals (whole mWh, rounded half up): 3,600,000,000 mJ -> "1.000000".
std::string energy_kwh_text(int64_t energy_mj);
// Carbon as kg CO2e with six decimals (whole mg, rounded half up): 1,500 µg -> "0.000002".
std::string carbon_kg_text(int64_t carbon_ug);

nlohmann::json invoice_json(const Invoice& invoice);
nlohmann::json credit_note_json(const CreditNote& note);

std::string invoice_csv(const State& state, const Invoice& invoice);
// The invoice as a document a customer accepts: the issuer's legal name, address and tax id, the
// customer, the issue and due dates, the period, and amounts in the currency's minor unit with
// a rounding line (see MinorAmounts), printable as it is (and so as PDF).
std::string invoice_html(const State& state, const Invoice& invoice, const Issuer& issuer);

// Text made safe for HTML element content and attribute values.
std::string html_escape(std::string_view text);
// One CSV field: quoted when it holds a comma, quote or line break; a leading =, +, - or @ is
// prefixed with ' so that spreadsheets do not run it as a formula.
std::string csv_field(std::string_view text);

}  // namespace allot::billing
