#include "finance/schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>

#include "common/int128.h"

namespace allot::finance {
namespace {

// The estimate in force for a month: the asset's own, or the last change that has taken effect
// by then.
struct Estimate {
  int life_months = 0;
  int64_t salvage_micros = 0;
};

Estimate estimate_at(const Asset& asset, TimeMs month_ms) {
  Estimate estimate{.life_months = asset.life_months, .salvage_micros = asset.salvage_micros};
  for (const EstimateChange& change : asset.changes) {
    // A change dated mid-month still applies from that month's start, as changes are by month.
    if (month_start(change.from_month_ms) > month_ms) break;
    estimate = {.life_months = change.life_months, .salvage_micros = change.salvage_micros};
  }
  return estimate;
}

// floor(book x factor / (1000 x life)): the declining-balance share of the book for one month.
int64_t declining_amount(int64_t book_micros, int64_t factor_milli, int life_months) {
  if (book_micros <= 0 || factor_milli <= 0 || life_months <= 0) return 0;
  const Int128 amount =
      static_cast<Int128>(book_micros) * factor_milli / (static_cast<Int128>(1000) * life_months);
  return amount > INT64_MAX ? INT64_MAX : static_cast<int64_t>(amount);
}

// One month's depreciation with `months_left` of the life to go, counting this month. With one
// month or less left, everything down to salvage goes now, which is how the last month lands
// exactly on salvage and how a life shortened below the months already elapsed is caught up.
int64_t month_depreciation(const Asset& asset, int64_t book_micros, const Estimate& estimate,
                           int months_left) {
  const int64_t depreciable = book_micros - estimate.salvage_micros;
  // A salvage value raised above the book is not a reason to write the book up; depreciation
  // simply stops until the estimate changes again.
  if (depreciable <= 0) return 0;
  if (months_left <= 1) return depreciable;
  int64_t amount = depreciable / months_left;
  if (asset.method == Method::kDecliningBalance) {
    // No month takes less than the straight-line amount: that is the switch to straight-line
    // once the declining share falls below it.
    amount = std::max(
        amount, declining_amount(book_micros, asset.declining_factor_milli, estimate.life_months));
  }
  return std::min(amount, depreciable);
}

// balance x annual rate / 12,000,000, rounded half up to the micro-unit. Kept in 128 bits so that
// a simulation with too small a payment cannot overflow before it is found wanting.
Int128 month_interest(Int128 balance_micros, int64_t annual_rate_ppm) {
  if (balance_micros <= 0 || annual_rate_ppm <= 0) return 0;
  constexpr Int128 kDivisor = 12'000'000;
  return (balance_micros * annual_rate_ppm + kDivisor / 2) / kDivisor;
}

// Whether paying `payment` every month repays the loan within `term_months`.
bool repays(int64_t principal_micros, int64_t annual_rate_ppm, int term_months,
            int64_t payment_micros) {
  Int128 balance = principal_micros;
  for (int month = 0; month < term_months; ++month) {
    const Int128 owed = balance + month_interest(balance, annual_rate_ppm);
    if (owed <= payment_micros) return true;
    const Int128 next = owed - payment_micros;
    // Interest grows with the balance, so a balance that did not fall this month never will.
    if (next >= balance) return false;
    balance = next;
  }
  return false;
}

std::vector<FinancingMonth> loan_schedule(const Financing& financing, TimeMs first_month_ms) {
  std::vector<FinancingMonth> rows;
  const int64_t payment =
      loan_payment(financing.principal_micros, financing.annual_rate_ppm, financing.term_months);
  int64_t balance = financing.principal_micros;
  TimeMs month = first_month_ms;
  for (int number = 1; number <= financing.term_months && balance > 0; ++number) {
    const auto interest = static_cast<int64_t>(month_interest(balance, financing.annual_rate_ppm));
    FinancingMonth row{.month_ms = month, .interest_micros = interest};
    if (number == financing.term_months || balance + interest <= payment) {
      // The last payment is whatever is left with its interest, so the balance ends at zero.
      row.payment_micros = balance + interest;
      row.principal_micros = balance;
    } else {
      row.payment_micros = payment;
      row.principal_micros = payment - interest;
    }
    balance -= row.principal_micros;
    row.balance_end_micros = balance;
    rows.push_back(row);
    month = next_month_start(month);
  }
  return rows;
}

std::vector<FinancingMonth> lease_schedule(const Financing& financing, TimeMs first_month_ms) {
  std::vector<FinancingMonth> rows;
  rows.reserve(static_cast<size_t>(std::max(financing.term_months, 0)));
  TimeMs month = first_month_ms;
  for (int number = 1; number <= financing.term_months; ++number) {
    rows.push_back({.month_ms = month,
                    .payment_micros = financing.monthly_payment_micros,
                    .lease_micros = financing.monthly_payment_micros});
    month = next_month_start(month);
  }
  return rows;
}

}  // namespace

std::vector<DepreciationMonth> depreciation_schedule(const Asset& asset) {
  std::vector<DepreciationMonth> rows;
  std::optional<TimeMs> retired_month;
  if (asset.retired_ms != 0) retired_month = month_start(asset.retired_ms);
  int64_t book = asset.cost_micros;
  TimeMs month = month_start(asset.in_service_ms);
  for (int elapsed = 0;; ++elapsed) {
    const Estimate estimate = estimate_at(asset, month);
    const int months_left = estimate.life_months - elapsed;
    if (retired_month && *retired_month <= month) {
      rows.push_back({.month_ms = month,
                      .book_end_micros = 0,
                      .retirement_loss_micros = book - asset.retirement_proceeds_micros});
      break;
    }
    const int64_t depreciation = month_depreciation(asset, book, estimate, months_left);
    book -= depreciation;
    rows.push_back(
        {.month_ms = month, .depreciation_micros = depreciation, .book_end_micros = book});
    // The life in force ends with this month, or ended before it when a change cut it shorter
    // than the months already gone (this month then took everything down to salvage). A change
    // dated after the life has ended comes too late to matter.
    if (months_left <= 1) break;
    month = next_month_start(month);
  }
  return rows;
}

int64_t loan_payment(int64_t principal_micros, int64_t annual_rate_ppm, int term_months) {
  if (principal_micros <= 0 || term_months <= 0) return 0;
  // Without interest no payment below principal / term can repay the loan in time, and one at it
  // (rounded up) always does; with interest that is still a lower bound.
  int64_t low = principal_micros / term_months + (principal_micros % term_months != 0 ? 1 : 0);
  if (annual_rate_ppm <= 0) return low;
  // Paying everything with its interest in the first month always repays.
  const Int128 all_at_once = principal_micros + month_interest(principal_micros, annual_rate_ppm);
  int64_t high = all_at_once > INT64_MAX ? INT64_MAX : static_cast<int64_t>(all_at_once);
  if (!repays(principal_micros, annual_rate_ppm, term_months, high)) return high;
  // A larger payment leaves a smaller balance every month, so whether it repays is monotone in
  // the payment and the smallest one that does can be found by bisection.
  while (low < high) {
    const int64_t middle = low + (high - low) / 2;
    if (repays(principal_micros, annual_rate_ppm, term_months, middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

std::vector<FinancingMonth> financing_schedule(const Financing& financing, TimeMs in_service_ms) {
  const TimeMs first_month =
      month_start(financing.start_month_ms != 0 ? financing.start_month_ms : in_service_ms);
  switch (financing.kind) {
    case FinancingKind::kCash:
      return {};
    case FinancingKind::kLoan:
      return loan_schedule(financing, first_month);
    case FinancingKind::kLease:
      return lease_schedule(financing, first_month);
  }
  return {};
}

std::vector<int64_t> allocate(int64_t amount_micros, const std::vector<int64_t>& weights) {
  return allocate_wide(amount_micros, std::vector<Int128>(weights.begin(), weights.end()));
}

std::vector<int64_t> allocate_wide(int64_t amount_micros, const std::vector<Int128>& weights) {
  const size_t count = weights.size();
  if (count == 0) return {};
  // A negative weight has no meaning as a share, so it counts as zero.
  std::vector<Int128> effective(count);
  Int128 largest = 0;
  for (size_t i = 0; i < count; ++i) {
    effective[i] = std::max<Int128>(weights[i], 0);
    largest = std::max(largest, effective[i]);
  }
  // amount x weight must fit in 127 bits: the amount is below 2^63, so weights are scaled down
  // (all alike) until the largest is below 2^63 too. Weights that fit already are untouched.
  while (largest >= (Int128{1} << 63)) {
    for (Int128& w : effective) w >>= 1;
    largest >>= 1;
  }
  Int128 total_weight = 0;
  for (const Int128 w : effective) total_weight += w;
  if (total_weight == 0) {
    std::fill(effective.begin(), effective.end(), Int128{1});
    total_weight = static_cast<Int128>(count);
  }
  // A negative amount is split as its magnitude and the signs put back, so that splitting a
  // refund mirrors splitting the charge it undoes.
  const Int128 magnitude =
      amount_micros < 0 ? -static_cast<Int128>(amount_micros) : static_cast<Int128>(amount_micros);
  std::vector<Int128> shares(count);
  std::vector<Int128> remainders(count);
  Int128 given = 0;
  for (size_t i = 0; i < count; ++i) {
    const Int128 product = magnitude * effective[i];
    shares[i] = product / total_weight;
    remainders[i] = product % total_weight;
    given += shares[i];
  }
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainders[a] != remainders[b] ? remainders[a] > remainders[b] : a < b;
  });
  // Each floor lost less than one micro-unit, so fewer micro-units are left than there are
  // shares, and each one goes to a different share.
  for (Int128 k = 0; k < magnitude - given; ++k) ++shares[order[static_cast<size_t>(k)]];
  std::vector<int64_t> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i] = static_cast<int64_t>(amount_micros < 0 ? -shares[i] : shares[i]);
  }
  return out;
}

}  // namespace allot::finance
