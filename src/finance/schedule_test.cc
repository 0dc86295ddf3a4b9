#include "finance/schedule.h"

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/int128.h"

namespace allot::finance {
namespace {

constexpr int64_t kUnit = 1'000'000;  // 1.000000 in micro-units.

TimeMs month_of(const char* text) { return *parse_month(text); }

// The start of the n-th month (1 is the first) counting from the month holding `first_ms`.
TimeMs nth_month(TimeMs first_ms, int n) {
  TimeMs month = month_start(first_ms);
  for (int i = 1; i < n; ++i) month = next_month_start(month);
  return month;
}

// Mid-month on purpose: depreciation counts whole months from the month holding this moment.
const TimeMs kInService = *parse_time("2026-01-15T10:00:00Z");

// One expected row of a depreciation schedule, worked out by hand.
struct Expected {
  int64_t depreciation = 0;
  int64_t book_end = 0;
  int64_t retirement_loss = 0;
};

// Checks a whole schedule: one row per calendar month from the month in service, and each row's
// amounts as worked out by hand.
void expect_schedule(const std::vector<DepreciationMonth>& rows,
                     const std::vector<Expected>& expected) {
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("month " + std::to_string(i + 1));
    EXPECT_EQ(rows[i].month_ms, nth_month(kInService, static_cast<int>(i) + 1));
    EXPECT_EQ(rows[i].depreciation_micros, expected[i].depreciation);
    EXPECT_EQ(rows[i].book_end_micros, expected[i].book_end);
    EXPECT_EQ(rows[i].retirement_loss_micros, expected[i].retirement_loss);
  }
}

Asset straight_line_asset(int64_t cost, int64_t salvage, int life_months) {
  return {.id = "ast_0000000000000001",
          .cost_micros = cost,
          .in_service_ms = kInService,
          .life_months = life_months,
          .salvage_micros = salvage};
}

Asset declining_asset(int64_t cost, int64_t salvage, int life_months, int64_t factor_milli) {
  Asset asset = straight_line_asset(cost, salvage, life_months);
  asset.method = Method::kDecliningBalance;
  asset.declining_factor_milli = factor_milli;
  return asset;
}

TEST(Names, MethodsAndFinancingKindsReadBackAsWritten) {
  for (const Method method : {Method::kStraightLine, Method::kDecliningBalance}) {
    EXPECT_EQ(parse_method(method_name(method)), method);
  }
  EXPECT_EQ(method_name(Method::kStraightLine), "straight_line");
  EXPECT_EQ(method_name(Method::kDecliningBalance), "declining_balance");
  EXPECT_EQ(parse_method("double_declining"), std::nullopt);
  for (const FinancingKind kind :
       {FinancingKind::kCash, FinancingKind::kLoan, FinancingKind::kLease}) {
    EXPECT_EQ(parse_financing_kind(financing_kind_name(kind)), kind);
  }
  EXPECT_EQ(financing_kind_name(FinancingKind::kLease), "lease");
  EXPECT_EQ(parse_financing_kind("Lease"), std::nullopt);
  EXPECT_EQ(parse_financing_kind(""), std::nullopt);
}

TEST(StraightLine, SpreadsCostLessSalvageEvenlyOverTheLifeFromTheMonthInService) {
  // 100,000 less 10,000 salvage over 36 months: 90,000 / 36 = 2,500 a month, every month, as
  // (book - salvage) / months left is 2,500 again each time. After month k the book is
  // 100,000 - 2,500 k: 97,500 after January 2026, 70,000 after month 12, 10,000 after month 36
  // (December 2028).
  std::vector<Expected> expected;
  for (int k = 1; k <= 36; ++k) {
    expected.push_back({.depreciation = 2'500 * kUnit, .book_end = (100'000 - 2'500 * k) * kUnit});
  }
  const auto rows = depreciation_schedule(straight_line_asset(100'000 * kUnit, 10'000 * kUnit, 36));
  expect_schedule(rows, expected);
  EXPECT_EQ(rows.front().month_ms, month_of("2026-01"));
  EXPECT_EQ(rows[12].month_ms, month_of("2027-01"));
  EXPECT_EQ(rows.back().month_ms, month_of("2028-12"));
  EXPECT_EQ(rows.back().book_end_micros, 10'000 * kUnit);
}

TEST(StraightLine, FlooringLeavesTheRestToTheLastMonthAndTheTotalIsExact) {
  // 10 micro-units over 3 months: 10 / 3 = 3 (book 7), 7 / 2 = 3 (book 4), and the last month
  // takes the 4 that are left.
  expect_schedule(depreciation_schedule(straight_line_asset(10, 0, 3)),
                  {{.depreciation = 3, .book_end = 7},
                   {.depreciation = 3, .book_end = 4},
                   {.depreciation = 4, .book_end = 0}});
  // 1,000.000000 over 7 months, recomputed on the book each month:
  //   1: 1,000,000,000 / 7 = 142,857,142 (6 left over), book 857,142,858
  //   2: 857,142,858 / 6 = 142,857,143 exactly, book 714,285,715
  //   3: 714,285,715 / 5 = 142,857,143, book 571,428,572
  //   4: 571,428,572 / 4 = 142,857,143, book 428,571,429
  //   5: 428,571,429 / 3 = 142,857,143, book 285,714,286
  //   6: 285,714,286 / 2 = 142,857,143, book 142,857,143
  //   7: the rest, 142,857,143, book 0
  // Total 142,857,142 + 6 x 142,857,143 = 1,000,000,000.
  expect_schedule(depreciation_schedule(straight_line_asset(1'000 * kUnit, 0, 7)),
                  {{.depreciation = 142'857'142, .book_end = 857'142'858},
                   {.depreciation = 142'857'143, .book_end = 714'285'715},
                   {.depreciation = 142'857'143, .book_end = 571'428'572},
                   {.depreciation = 142'857'143, .book_end = 428'571'429},
                   {.depreciation = 142'857'143, .book_end = 285'714'286},
                   {.depreciation = 142'857'143, .book_end = 142'857'143},
                   {.depreciation = 142'857'143, .book_end = 0}});
}

TEST(DecliningBalance, DoubleDecliningSwitchesToStraightLineOnceThatGivesMore) {
  // 1,000 over 5 months at twice the straight-line rate: 2 / 5 = 40 % of the book a month.
  //   1: 40 % of 1,000 = 400 (straight-line 1,000 / 5 = 200), book 600
  //   2: 40 % of 600 = 240 (straight-line 600 / 4 = 150), book 360
  //   3: 40 % of 360 = 144 (straight-line 360 / 3 = 120), book 216
  //   4: 40 % of 216 = 86.4, but straight-line 216 / 2 = 108 is more: switch, book 108
  //   5: the last month takes the rest, 108, book 0
  expect_schedule(depreciation_schedule(declining_asset(1'000 * kUnit, 0, 5, 2'000)),
                  {{.depreciation = 400 * kUnit, .book_end = 600 * kUnit},
                   {.depreciation = 240 * kUnit, .book_end = 360 * kUnit},
                   {.depreciation = 144 * kUnit, .book_end = 216 * kUnit},
                   {.depreciation = 108 * kUnit, .book_end = 108 * kUnit},
                   {.depreciation = 108 * kUnit, .book_end = 0}});
}

TEST(DecliningBalance, NeverTakesTheBookBelowSalvageAndEndsExactlyOnIt) {
  // 1,000 with 100 salvage over 5 months, 40 % a month of the book (salvage is not deducted
  // from the base, only from what may be taken):
  //   1: 400 (straight-line 900 / 5 = 180), book 600
  //   2: 240 (straight-line 500 / 4 = 125), book 360
  //   3: 144 (straight-line 260 / 3 = 86.666666), book 216
  //   4: 86.4 (straight-line 116 / 2 = 58), book 129.6
  //   5: 40 % would be 51.84, but only 29.6 is above salvage: 29.6, book 100
  expect_schedule(depreciation_schedule(declining_asset(1'000 * kUnit, 100 * kUnit, 5, 2'000)),
                  {{.depreciation = 400 * kUnit, .book_end = 600 * kUnit},
                   {.depreciation = 240 * kUnit, .book_end = 360 * kUnit},
                   {.depreciation = 144 * kUnit, .book_end = 216 * kUnit},
                   {.depreciation = 86'400'000, .book_end = 129'600'000},
                   {.depreciation = 29'600'000, .book_end = 100 * kUnit}});
  // At four times the straight-line rate (80 % a month), 1,000 with 500 salvage would lose 800
  // in month 1; only the 500 above salvage goes, and the months after have nothing to take.
  expect_schedule(depreciation_schedule(declining_asset(1'000 * kUnit, 500 * kUnit, 5, 4'000)),
                  {{.depreciation = 500 * kUnit, .book_end = 500 * kUnit},
                   {.depreciation = 0, .book_end = 500 * kUnit},
                   {.depreciation = 0, .book_end = 500 * kUnit},
                   {.depreciation = 0, .book_end = 500 * kUnit},
                   {.depreciation = 0, .book_end = 500 * kUnit}});
}

TEST(DecliningBalance, EachMonthIsFlooredToTheMicroUnit) {
  // 1,000.000000 over 7 months at 150 %: floor(book x 1,500 / 7,000) = floor(book x 3 / 14).
  //   1: 3,000,000,000 / 14 = 214,285,714.28 -> 214,285,714 (SL 142,857,142), book 785,714,286
  //   2: 2,357,142,858 / 14 = 168,367,347 exactly (SL 130,952,381), book 617,346,939
  //   3: 1,852,040,817 / 14 = 132,288,629.78 -> 132,288,629 (SL 123,469,387), book 485,058,310
  //   4: 1,455,174,930 / 14 = 103,941,066.43, less than SL 485,058,310 / 4 = 121,264,577.5
  //      -> 121,264,577: the switch, book 363,793,733
  //   5: SL 363,793,733 / 3 = 121,264,577.67 -> 121,264,577 (rate 77,955,799), book 242,529,156
  //   6: SL 242,529,156 / 2 = 121,264,578, book 121,264,578
  //   7: the rest, 121,264,578, book 0
  expect_schedule(depreciation_schedule(declining_asset(1'000 * kUnit, 0, 7, 1'500)),
                  {{.depreciation = 214'285'714, .book_end = 785'714'286},
                   {.depreciation = 168'367'347, .book_end = 617'346'939},
                   {.depreciation = 132'288'629, .book_end = 485'058'310},
                   {.depreciation = 121'264'577, .book_end = 363'793'733},
                   {.depreciation = 121'264'577, .book_end = 242'529'156},
                   {.depreciation = 121'264'578, .book_end = 121'264'578},
                   {.depreciation = 121'264'578, .book_end = 0}});
}

TEST(ChangeOfEstimate, AShorterLifeSpreadsTheRemainingBookOverTheMonthsThatRemain) {
  // 72,000 over 6 years is 1,000 a month; after 12 months the book is 60,000. From month 13
  // (January 2027) the life is 5 years in all, so 60 - 12 = 48 months remain: 60,000 / 48 =
  // 1,250 a month, and the schedule now ends with month 60 (December 2030) at 0.
  Asset asset = straight_line_asset(72'000 * kUnit, 0, 72);
  asset.changes = {{.from_month_ms = month_of("2027-01"), .life_months = 60}};
  std::vector<Expected> expected;
  for (int k = 1; k <= 12; ++k) {
    expected.push_back({.depreciation = 1'000 * kUnit, .book_end = (72'000 - 1'000 * k) * kUnit});
  }
  for (int k = 13; k <= 60; ++k) {
    expected.push_back(
        {.depreciation = 1'250 * kUnit, .book_end = (60'000 - 1'250 * (k - 12)) * kUnit});
  }
  const auto rows = depreciation_schedule(asset);
  expect_schedule(rows, expected);
  EXPECT_EQ(rows.back().month_ms, month_of("2030-12"));
}

TEST(ChangeOfEstimate, ANewSalvageValueAppliesFromItsMonthOn) {
  // 12,000 over 12 months with no salvage is 1,000 a month; the book is 6,000 after month 6. From
  // month 7 the salvage is 1,200: (6,000 - 1,200) / 6 = 800 a month, ending on 1,200.
  Asset asset = straight_line_asset(12'000 * kUnit, 0, 12);
  asset.changes = {
      {.from_month_ms = month_of("2026-07"), .life_months = 12, .salvage_micros = 1'200 * kUnit}};
  std::vector<Expected> expected;
  for (int k = 1; k <= 6; ++k) {
    expected.push_back({.depreciation = 1'000 * kUnit, .book_end = (12'000 - 1'000 * k) * kUnit});
  }
  for (int k = 7; k <= 12; ++k) {
    expected.push_back({.depreciation = 800 * kUnit, .book_end = (6'000 - 800 * (k - 6)) * kUnit});
  }
  expect_schedule(depreciation_schedule(asset), expected);
}

TEST(ChangeOfEstimate, ALifeAlreadyOverTakesEverythingLeftInTheMonthOfTheChange) {
  // 12,000 over 12 months, 1,000 a month; from month 7 the life is 5 months, already past: the
  // whole 6,000 left goes in month 7 and the schedule ends there.
  Asset asset = straight_line_asset(12'000 * kUnit, 0, 12);
  // Dated mid-month, the change still applies from the start of July.
  asset.changes = {{.from_month_ms = *parse_time("2026-07-20T00:00:00Z"), .life_months = 5}};
  std::vector<Expected> expected;
  for (int k = 1; k <= 6; ++k) {
    expected.push_back({.depreciation = 1'000 * kUnit, .book_end = (12'000 - 1'000 * k) * kUnit});
  }
  expected.push_back({.depreciation = 6'000 * kUnit, .book_end = 0});
  expect_schedule(depreciation_schedule(asset), expected);
}

TEST(ChangeOfEstimate, ANewLifeChangesTheDecliningRateToo) {
  // 1,000 over 10 months double declining: 20 % a month, 200 in month 1 (SL 100), book 800.
  // From month 2 the life is 5 months (4 remain) and the rate 2 / 5 = 40 %:
  //   2: 40 % of 800 = 320 (SL 800 / 4 = 200), book 480
  //   3: 40 % of 480 = 192 (SL 480 / 3 = 160), book 288
  //   4: 40 % of 288 = 115.2, less than SL 288 / 2 = 144: 144, book 144
  //   5: the rest, 144, book 0
  Asset asset = declining_asset(1'000 * kUnit, 0, 10, 2'000);
  asset.changes = {{.from_month_ms = month_of("2026-02"), .life_months = 5}};
  expect_schedule(depreciation_schedule(asset),
                  {{.depreciation = 200 * kUnit, .book_end = 800 * kUnit},
                   {.depreciation = 320 * kUnit, .book_end = 480 * kUnit},
                   {.depreciation = 192 * kUnit, .book_end = 288 * kUnit},
                   {.depreciation = 144 * kUnit, .book_end = 144 * kUnit},
                   {.depreciation = 144 * kUnit, .book_end = 0}});
}

// The 36-month asset above, retired in its 13th month (January 2027) with 12 months taken:
// the book at that month's start is 100,000 - 12 x 2,500 = 70,000.
std::vector<Expected> retired_in_month_13(int64_t loss) {
  std::vector<Expected> expected;
  for (int k = 1; k <= 12; ++k) {
    expected.push_back({.depreciation = 2'500 * kUnit, .book_end = (100'000 - 2'500 * k) * kUnit});
  }
  expected.push_back({.depreciation = 0, .book_end = 0, .retirement_loss = loss});
  return expected;
}

TEST(Retirement, EndsTheScheduleWithALossWhenSoldBelowBook) {
  // Sold for 50,000 against a book of 70,000: a loss of 20,000, no depreciation that month.
  Asset asset = straight_line_asset(100'000 * kUnit, 10'000 * kUnit, 36);
  asset.retired_ms = *parse_time("2027-01-20T12:00:00Z");
  asset.retirement_proceeds_micros = 50'000 * kUnit;
  expect_schedule(depreciation_schedule(asset), retired_in_month_13(20'000 * kUnit));
}

TEST(Retirement, AGainIsANegativeLoss) {
  // Sold for 75,000 against a book of 70,000: a gain of 5,000.
  Asset asset = straight_line_asset(100'000 * kUnit, 10'000 * kUnit, 36);
  asset.retired_ms = *parse_time("2027-01-01T00:00:00Z");
  asset.retirement_proceeds_micros = 75'000 * kUnit;
  expect_schedule(depreciation_schedule(asset), retired_in_month_13(-5'000 * kUnit));
}

TEST(Retirement, AfterTheEndOfTheLifeChangesNothing) {
  Asset asset = straight_line_asset(10, 0, 3);
  asset.retired_ms = *parse_time("2026-09-01T00:00:00Z");
  asset.retirement_proceeds_micros = 1;
  expect_schedule(depreciation_schedule(asset), {{.depreciation = 3, .book_end = 7},
                                                 {.depreciation = 3, .book_end = 4},
                                                 {.depreciation = 4, .book_end = 0}});
}

// One expected loan or lease month, worked out by hand.
struct ExpectedPayment {
  int64_t payment = 0;
  int64_t interest = 0;
  int64_t principal = 0;
  int64_t balance_end = 0;
  int64_t lease = 0;
};

void expect_payments(const std::vector<FinancingMonth>& rows, TimeMs first_month_ms,
                     const std::vector<ExpectedPayment>& expected) {
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("payment " + std::to_string(i + 1));
    EXPECT_EQ(rows[i].month_ms, nth_month(first_month_ms, static_cast<int>(i) + 1));
    EXPECT_EQ(rows[i].payment_micros, expected[i].payment);
    EXPECT_EQ(rows[i].interest_micros, expected[i].interest);
    EXPECT_EQ(rows[i].principal_micros, expected[i].principal);
    EXPECT_EQ(rows[i].balance_end_micros, expected[i].balance_end);
    EXPECT_EQ(rows[i].lease_micros, expected[i].lease);
  }
}

TEST(Loan, PaysTheSmallestWholePaymentThatRepaysWithinTheTerm) {
  // 1,000 at 12 % a year (120,000 ppm) over 3 months: 1 % a month. The annuity formula gives
  // 1,000 x 0.01 x 1.01^3 / (1.01^3 - 1) = 10.30301 / 0.030301 = 340.0221114814..., so the
  // whole-micro payment is 340.022112 (340.022111 is short, as the table for it shows below).
  //   1: interest 1,000,000,000 x 1 % = 10,000,000 exactly; principal 330,022,112;
  //      balance 669,977,888
  //   2: interest 6,699,778.88 -> 6,699,779; principal 333,322,333; balance 336,655,555
  //   3: interest 3,366,555.55 -> 3,366,556; the last payment is the balance with its interest,
  //      336,655,555 + 3,366,556 = 340,022,111; balance 0
  // At 340,022,111: balances 669,977,889, then 336,655,557 (interest 6,699,779), and month 3
  // owes 336,655,557 + 3,366,556 = 340,022,113, more than the payment: not repaid in time.
  EXPECT_EQ(loan_payment(1'000 * kUnit, 120'000, 3), 340'022'112);
  const Financing loan{.kind = FinancingKind::kLoan,
                       .principal_micros = 1'000 * kUnit,
                       .annual_rate_ppm = 120'000,
                       .term_months = 3};
  expect_payments(financing_schedule(loan, kInService), month_of("2026-01"),
                  {{.payment = 340'022'112,
                    .interest = 10'000'000,
                    .principal = 330'022'112,
                    .balance_end = 669'977'888},
                   {.payment = 340'022'112,
                    .interest = 6'699'779,
                    .principal = 333'322'333,
                    .balance_end = 336'655'555},
                   {.payment = 340'022'111,
                    .interest = 3'366'556,
                    .principal = 336'655'555,
                    .balance_end = 0}});
}

TEST(Loan, InterestRoundsHalfUpToTheMicroUnit) {
  // 50 micro-units at 12 % over 2 months: month 1's interest of 0.5 rounds up to 1. A payment
  // of 26 leaves 50 + 1 - 26 = 25, whose interest of 0.25 rounds down to 0, so month 2 pays 25.
  // A payment of 25 would leave 26 owing in month 2 (0.26 rounds to 0), more than 25: short.
  EXPECT_EQ(loan_payment(50, 120'000, 2), 26);
  const Financing loan{.kind = FinancingKind::kLoan,
                       .principal_micros = 50,
                       .annual_rate_ppm = 120'000,
                       .term_months = 2};
  expect_payments(financing_schedule(loan, kInService), month_of("2026-01"),
                  {{.payment = 26, .interest = 1, .principal = 25, .balance_end = 25},
                   {.payment = 25, .interest = 0, .principal = 25, .balance_end = 0}});
}

TEST(Loan, WithoutInterestThePaymentRoundsUpAndTheLastMonthTakesWhatIsLeft) {
  // 1,000 over 3 months: 333.333333... rounds up to 333.333334; the balance falls to
  // 666.666666, then 333.333332, which the last month pays.
  EXPECT_EQ(loan_payment(1'000 * kUnit, 0, 3), 333'333'334);
  const Financing loan{.kind = FinancingKind::kLoan,
                       .principal_micros = 1'000 * kUnit,
                       .term_months = 3,
                       .start_month_ms = *parse_time("2026-03-09T00:00:00Z")};
  // An explicit start month places the schedule, whatever the month in service.
  expect_payments(financing_schedule(loan, kInService), month_of("2026-03"),
                  {{.payment = 333'333'334, .principal = 333'333'334, .balance_end = 666'666'666},
                   {.payment = 333'333'334, .principal = 333'333'334, .balance_end = 333'333'332},
                   {.payment = 333'333'332, .principal = 333'333'332, .balance_end = 0}});
}

TEST(Loan, NothingBorrowedOrNoTermMeansNoPayments) {
  EXPECT_EQ(loan_payment(0, 65'000, 12), 0);
  EXPECT_EQ(loan_payment(1'000 * kUnit, 65'000, 0), 0);
  EXPECT_TRUE(
      financing_schedule({.kind = FinancingKind::kLoan, .term_months = 12}, kInService).empty());
}

TEST(Lease, PaysTheMonthlyPaymentForEachMonthOfTheTerm) {
  const Financing lease{
      .kind = FinancingKind::kLease, .term_months = 36, .monthly_payment_micros = 2'000 * kUnit};
  const auto rows = financing_schedule(lease, kInService);
  std::vector<ExpectedPayment> expected(36, {.payment = 2'000 * kUnit, .lease = 2'000 * kUnit});
  expect_payments(rows, month_of("2026-01"), expected);
  EXPECT_EQ(rows.back().month_ms, month_of("2028-12"));
}

TEST(Cash, HasNoFinancingSchedule) {
  EXPECT_TRUE(financing_schedule(
                  {.kind = FinancingKind::kCash, .principal_micros = 5 * kUnit, .term_months = 12},
                  kInService)
                  .empty());
}

TEST(Allocate, SplitsExactlyWithLeftoversToTheLargestRemainders) {
  struct Case {
    const char* why;
    int64_t amount;
    std::vector<int64_t> weights;
    std::vector<int64_t> shares;
  };
  const std::vector<Case> cases = {
      {"divides evenly", 1'000'000, {1, 2, 3, 4}, {100'000, 200'000, 300'000, 400'000}},
      // 10 x 1/3 = 3.33 and 10 x 2/3 = 6.67: floors 3 and 6, the one left to the larger remainder.
      {"leftover to the largest remainder", 10, {1, 2}, {3, 7}},
      // 100 / 3 = 33 each with equal remainders: the one left goes to the lowest index.
      {"ties go to the lower index", 100, {1, 1, 1}, {34, 33, 33}},
      {"a zero weight gets nothing", 10, {3, 0, 7}, {3, 0, 7}},
      // All weights zero: equal shares, 7 = 3 + 2 + 2.
      {"all zero weights split equally", 7, {0, 0, 0}, {3, 2, 2}},
      {"a single weight takes everything", 123'456'789, {5}, {123'456'789}},
      {"a single zero weight takes everything", 42, {0}, {42}},
      {"nothing to split", 0, {2, 3}, {0, 0}},
      // A refund splits like the charge it undoes, signs reversed.
      {"a negative amount mirrors the positive split", -10, {1, 2}, {-3, -7}},
      // The products need more than 64 bits: INT64_MAX x INT64_MAX. Each exact share is
      // INT64_MAX / 2 and a half; both floor to INT64_MAX / 2 with equal remainders, so the one
      // micro-unit left goes to the first.
      {"no overflow on the largest values",
       INT64_MAX,
       {INT64_MAX, INT64_MAX},
       {INT64_MAX / 2 + 1, INT64_MAX / 2}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(allocate(c.amount, c.weights), c.shares) << c.why;
  }
  EXPECT_TRUE(allocate(100, {}).empty());
}

// The salvage value in force in a month, from the asset's estimates.
int64_t salvage_at(const Asset& asset, TimeMs month_ms) {
  int64_t salvage = asset.salvage_micros;
  for (const EstimateChange& change : asset.changes) {
    if (month_start(change.from_month_ms) <= month_ms) salvage = change.salvage_micros;
  }
  return salvage;
}

Asset random_asset(std::mt19937_64& rng) {
  Asset asset;
  asset.cost_micros = static_cast<int64_t>(rng() % 10'000'000'000'000);
  if (rng() % 3 != 0) {
    asset.salvage_micros =
        static_cast<int64_t>(rng() % static_cast<uint64_t>(asset.cost_micros / 2 + 1));
  }
  asset.life_months = 1 + static_cast<int>(rng() % 120);
  asset.in_service_ms = kInService + static_cast<int64_t>(rng() % 300'000'000'000);
  asset.method = rng() % 2 == 0 ? Method::kStraightLine : Method::kDecliningBalance;
  asset.declining_factor_milli = 1'000 + static_cast<int64_t>(rng() % 2'001);
  TimeMs from = asset.in_service_ms;
  int64_t salvage = asset.salvage_micros;
  for (int n = static_cast<int>(rng() % 3); n > 0; --n) {
    from = nth_month(from, 2 + static_cast<int>(rng() % 60));
    // Salvage only falls here: one raised above the book stops depreciation short of it.
    salvage = static_cast<int64_t>(rng() % static_cast<uint64_t>(salvage + 1));
    asset.changes.push_back({.from_month_ms = from,
                             .life_months = 1 + static_cast<int>(rng() % 150),
                             .salvage_micros = salvage});
  }
  if (rng() % 3 == 0) {
    asset.retired_ms = nth_month(asset.in_service_ms, 1 + static_cast<int>(rng() % 130)) +
                       static_cast<int64_t>(rng() % 86'400'000);
    asset.retirement_proceeds_micros = static_cast<int64_t>(rng() % 5'000'000'000'000);
  }
  return asset;
}

// Checks one random asset's schedule: consecutive months, no negative depreciation, never below
// salvage, and everything accounted for at the end (down to salvage, or written off at
// retirement).
void check_depreciation(const Asset& asset) {
  const auto rows = depreciation_schedule(asset);
  int64_t book = asset.cost_micros;
  TimeMs month = month_start(asset.in_service_ms);
  bool retired = false;
  for (const DepreciationMonth& row : rows) {
    ASSERT_FALSE(retired) << "a row after the retirement month";
    EXPECT_EQ(row.month_ms, month);
    if (asset.retired_ms != 0 && row.month_ms == month_start(asset.retired_ms)) {
      EXPECT_EQ(row.depreciation_micros, 0);
      EXPECT_EQ(row.book_end_micros, 0);
      EXPECT_EQ(row.retirement_loss_micros, book - asset.retirement_proceeds_micros);
      retired = true;
    } else {
      EXPECT_GE(row.depreciation_micros, 0);
      book -= row.depreciation_micros;
      EXPECT_EQ(row.book_end_micros, book);
      EXPECT_GE(book, salvage_at(asset, month));
      EXPECT_EQ(row.retirement_loss_micros, 0);
    }
    month = next_month_start(month);
  }
  if (!retired) {
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(book, salvage_at(asset, rows.back().month_ms));
    if (asset.retired_ms != 0) {
      EXPECT_GT(month_start(asset.retired_ms), rows.back().month_ms);
    }
  }
}

TEST(Property, RandomAssetsDepreciateExactlyDownToSalvageOrRetirement) {
  constexpr uint64_t kSeed = 20'260'101;
  std::cout << "depreciation property seed " << kSeed << '\n';
  std::mt19937_64 rng(kSeed);
  for (int round = 0; round < 2'000; ++round) {
    const Asset asset = random_asset(rng);
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " round " + std::to_string(round));
    check_depreciation(asset);
    if (testing::Test::HasFatalFailure()) return;
  }
}

// Whether a payment repays the loan within its term, simulated here on its own terms.
bool repays_in_time(int64_t principal, int64_t rate_ppm, int term, int64_t payment) {
  Int128 balance = principal;
  for (int month = 0; month < term && balance > 0; ++month) {
    balance += (balance * rate_ppm + 6'000'000) / 12'000'000;
    balance -= payment;
  }
  return balance <= 0;
}

TEST(Property, RandomLoansRepayExactlyWithTheSmallestPayment) {
  constexpr uint64_t kSeed = 6'500;
  std::cout << "loan property seed " << kSeed << '\n';
  std::mt19937_64 rng(kSeed);
  for (int round = 0; round < 300; ++round) {
    const Financing loan{
        .kind = FinancingKind::kLoan,
        .principal_micros = 1 + static_cast<int64_t>(rng() % 1'000'000'000'000),
        .annual_rate_ppm = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 300'000),
        .term_months = 1 + static_cast<int>(rng() % 360)};
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " round " + std::to_string(round));
    const int64_t payment =
        loan_payment(loan.principal_micros, loan.annual_rate_ppm, loan.term_months);
    EXPECT_TRUE(
        repays_in_time(loan.principal_micros, loan.annual_rate_ppm, loan.term_months, payment));
    EXPECT_FALSE(
        repays_in_time(loan.principal_micros, loan.annual_rate_ppm, loan.term_months, payment - 1));
    const auto rows = financing_schedule(loan, kInService);
    ASSERT_FALSE(rows.empty());
    ASSERT_LE(rows.size(), static_cast<size_t>(loan.term_months));
    int64_t balance = loan.principal_micros;
    int64_t repaid = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto interest = static_cast<int64_t>(
          (static_cast<Int128>(balance) * loan.annual_rate_ppm + 6'000'000) / 12'000'000);
      EXPECT_EQ(rows[i].interest_micros, interest);
      EXPECT_EQ(rows[i].payment_micros, rows[i].interest_micros + rows[i].principal_micros);
      EXPECT_LE(rows[i].payment_micros, payment);
      if (i + 1 < rows.size()) {
        EXPECT_EQ(rows[i].payment_micros, payment);
      }
      balance -= rows[i].principal_micros;
      repaid += rows[i].principal_micros;
      EXPECT_EQ(rows[i].balance_end_micros, balance);
    }
    EXPECT_EQ(repaid, loan.principal_micros);
    EXPECT_EQ(rows.back().balance_end_micros, 0);
  }
}

TEST(Property, RandomAllocationsAddUpAndStayWithinOneOfTheirExactShare) {
  constexpr uint64_t kSeed = 77;
  std::cout << "allocate property seed " << kSeed << '\n';
  std::mt19937_64 rng(kSeed);
  for (int round = 0; round < 2'000; ++round) {
    const auto amount = static_cast<int64_t>(rng() % 1'000'000'000'000'000);
    std::vector<int64_t> weights(1 + rng() % 20);
    Int128 total_weight = 0;
    for (int64_t& weight : weights) {
      weight = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 1'000'000'000'000);
      total_weight += weight;
    }
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " round " + std::to_string(round));
    const auto shares = allocate(amount, weights);
    ASSERT_EQ(shares.size(), weights.size());
    Int128 sum = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
      sum += shares[i];
      if (total_weight == 0) continue;
      // |share x W - amount x w| < W: within one micro-unit of the exact proportion.
      const Int128 gap =
          static_cast<Int128>(shares[i]) * total_weight - static_cast<Int128>(amount) * weights[i];
      EXPECT_TRUE(gap > -total_weight && gap < total_weight) << i;
    }
    EXPECT_TRUE(sum == amount);
  }
}

}  // namespace
}  // namespace allot::finance
