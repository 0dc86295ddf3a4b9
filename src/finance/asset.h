// The operator's own books: what a server (or a batch bought together) cost, how its cost is
// spread over its life, and how it was paid for. Plain data; the schedules are in schedule.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace allot::finance {

// Straight-line spreads cost less salvage evenly over the life; declining balance takes a fixed
// share of the book value each month (factor / life months; 2.0 is "double declining") and
// switches to straight-line over the months left once that gives more.
enum class Method { kStraightLine, kDecliningBalance };

enum class FinancingKind { kCash, kLoan, kLease };

std::string_view method_name(Method method);
std::optional<Method> parse_method(std::string_view name);
std::string_view financing_kind_name(FinancingKind kind);
std::optional<FinancingKind> parse_financing_kind(std::string_view name);

// A change of estimate, prospective from the month starting at from_month_ms: the asset's whole
// useful life (counted from its first month in service) and its salvage value. The book value at
// that month's start is spread over the months that remain under the new estimate.
struct EstimateChange {
  TimeMs from_month_ms = 0;
  int life_months = 0;
  int64_t salvage_micros = 0;

  bool operator==(const EstimateChange&) const = default;
};

// How the asset was paid for. Cash: nothing after purchase. Loan: `principal` repaid in
// `term_months` equal monthly payments (the last one takes what is left) of interest at
// annual_rate_ppm / 12 per month on the balance, rounded to the micro-unit, and principal.
// Lease: `monthly_payment` for `term_months`.
struct Financing {
  FinancingKind kind = FinancingKind::kCash;
  int64_t principal_micros = 0;
  int64_t annual_rate_ppm = 0;  // Parts per million a year: 65,000 is 6.5 %.
  int term_months = 0;
  int64_t monthly_payment_micros = 0;
  TimeMs start_month_ms = 0;  // The first payment's month; 0: the month the asset entered service.

  bool operator==(const Financing&) const = default;
};

struct Asset {
  std::string id;  // "ast_" + 16 hex
  std::string name;
  std::vector<std::string> node_ids;  // One node, or a batch bought together.
  int64_t cost_micros = 0;            // Purchase price of the whole batch.
  TimeMs in_service_ms = 0;           // Depreciation starts with the month holding this moment.
  int life_months = 0;
  int64_t salvage_micros = 0;
  Method method = Method::kStraightLine;
  int64_t declining_factor_milli = 2000;  // Declining balance only: 2,000 is double declining.
  std::vector<EstimateChange> changes;    // By from_month_ms, ascending.
  TimeMs retired_ms = 0;                  // Early retirement: 0 while in service.
  int64_t retirement_proceeds_micros = 0;
  Financing financing;
  int64_t power_kw_milli = 0;  // Power contracted for colocation, in watts (kW x 1000).
  TimeMs created_at_ms = 0;

  bool operator==(const Asset&) const = default;
};

}  // namespace allot::finance
