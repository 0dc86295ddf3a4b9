// Currencies as invoices show them: an ISO 4217 code and its minor unit (cents for USD, none for
// JPY, fils for KWD), and the rule that turns the ledger's micro-units into whole minor units on
// a document without the shown lines and the shown total disagreeing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot {
struct Invoice;
}  // namespace allot

namespace allot::billing {

struct Currency {
  std::string code;  // ISO 4217, e.g. "USD".
  int exponent = 2;  // Decimals of its minor unit: 2 for USD, 0 for JPY, 3 for KWD.
};

// The active ISO 4217 currency named by `code` (upper case, three letters), or nullopt.
std::optional<Currency> find_currency(std::string_view code);

// Micro-units rounded half away from zero to whole minor units: 12,345,000 micros is 1,235 cents.
int64_t to_minor_units(int64_t micros, const Currency& currency);
// Whole minor units as decimal text: 1,235 cents -> "12.35"; 5 yen -> "5"; -7 cents -> "-0.07".
std::string minor_units_text(int64_t minor, const Currency& currency);
// Micro-units as money a person reads: rounded to the minor unit, with the code: "12.35 USD".
std::string money_text(int64_t micros, const Currency& currency);
// The same without rounding, for amounts that must be told apart exactly (a refusal's limit):
// "12.50 USD", but "0.000001 USD" for an amount below the minor unit.
std::string exact_money_text(int64_t micros, const Currency& currency);

// An invoice's amounts in minor units. Each line is rounded on its own, half away from zero; the
// total is the ledger's micro-unit total rounded once; `rounding` is what makes the shown lines
// add up to it: subtotal - credits + rounding = total. What follows the total (credited, paid
// from the balance) is rounded each on its own, and amount_due is the shown total less them
// (never below 0), so that every shown sum holds.
struct MinorAmounts {
  std::vector<int64_t> lines;
  int64_t subtotal = 0;  // The sum of the shown lines.
  int64_t credits = 0;
  int64_t rounding = 0;
  int64_t total = 0;
  int64_t credited = 0;
  int64_t paid_from_balance = 0;
  int64_t paid = 0;  // What a recorded payment paid.
  int64_t amount_due = 0;
};

// The amounts `invoice` shows, from its lines, totals and what its prepaid balance paid.
MinorAmounts document_amounts(const Invoice& invoice, const Currency& currency);

}  // namespace allot::billing
