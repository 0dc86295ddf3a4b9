// Depreciation and financing schedules, month by month, in integer micro-units. Pure functions of
// an Asset; every total adds up exactly (the last month takes what rounding left).
#pragma once

#include <cstdint>
#include <vector>

#include "common/int128.h"
#include "finance/asset.h"

namespace allot::finance {

struct DepreciationMonth {
  TimeMs month_ms = 0;  // The month's first moment (UTC).
  int64_t depreciation_micros = 0;
  int64_t book_end_micros = 0;  // Book value at the month's end.
  // Retirement month only: book value less proceeds (a gain is negative); no depreciation then.
  int64_t retirement_loss_micros = 0;

  bool operator==(const DepreciationMonth&) const = default;
};

// Every month from the month in service to the end of the useful life (as last estimated) or the
// month of retirement, whichever comes first. Straight-line: (book - salvage) / months left, the
// last month taking the rest, recomputed at each change of estimate. Declining balance: book x
// factor / life months, floored, never below salvage, switching to straight-line when that gives
// more. The retirement month carries no depreciation; its row has the loss on retirement and a
// book value of zero.
std::vector<DepreciationMonth> depreciation_schedule(const Asset& asset);

struct FinancingMonth {
  TimeMs month_ms = 0;
  int64_t payment_micros = 0;
  int64_t interest_micros = 0;   // Loan: interest part; lease: 0.
  int64_t principal_micros = 0;  // Loan: principal part; lease: 0.
  int64_t balance_end_micros = 0;
  int64_t lease_micros = 0;  // Lease: the payment.

  bool operator==(const FinancingMonth&) const = default;
};

// The monthly payment of a loan: the smallest whole number of micro-units that repays
// `principal` within `term_months` when each month's interest is balance x rate / 12, rounded
// half up to the micro-unit. Zero rate: principal / term, rounded up.
int64_t loan_payment(int64_t principal_micros, int64_t annual_rate_ppm, int term_months);

// The loan's amortisation schedule (payment, interest, principal, balance) or a lease's payments;
// empty for cash. `in_service_ms` places the schedule when financing.start_month_ms is 0.
std::vector<FinancingMonth> financing_schedule(const Financing& financing, TimeMs in_service_ms);

// Splits `amount` over `weights` in proportion, exactly: each share floored, then the micro-units
// left go one each to the largest remainders (ties to the lower index). All weights zero: equal
// shares. Empty weights: empty.
std::vector<int64_t> allocate(int64_t amount_micros, const std::vector<int64_t>& weights);
// The same with 128-bit weights (products such as weight x seconds). Weights of 2^63 or more are
// all halved alike until they are below it, so that amount x weight cannot overflow.
std::vector<int64_t> allocate_wide(int64_t amount_micros, const std::vector<Int128>& weights);

}  // namespace allot::finance
