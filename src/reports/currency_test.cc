#include "reports/currency.h"

#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/invoice.h"

namespace allot::billing {
namespace {

const Currency kUsd{.code = "USD", .exponent = 2};
const Currency kJpy{.code = "JPY", .exponent = 0};
const Currency kKwd{.code = "KWD", .exponent = 3};

// Invoice lines of these amounts.
std::vector<InvoiceLine> lines_of(std::initializer_list<int64_t> amounts_micros) {
  std::vector<InvoiceLine> lines;
  for (int64_t amount : amounts_micros) lines.push_back(InvoiceLine{.amount_micros = amount});
  return lines;
}

TEST(Currency, KnowsIso4217CodesAndTheirMinorUnits) {
  EXPECT_EQ(find_currency("USD")->exponent, 2);
  EXPECT_EQ(find_currency("EUR")->exponent, 2);
  EXPECT_EQ(find_currency("JPY")->exponent, 0);
  EXPECT_EQ(find_currency("KWD")->exponent, 3);
  EXPECT_EQ(find_currency("CLF")->exponent, 4);
  for (const char* bad : {"usd", "US", "USDX", "XXX", "ABC", "", "US "}) {
    EXPECT_FALSE(find_currency(bad)) << bad;
  }
}

TEST(Currency, RoundsHalfAwayFromZeroToTheMinorUnit) {
  EXPECT_EQ(to_minor_units(12'345'000, kUsd), 1'235);
  EXPECT_EQ(to_minor_units(12'344'999, kUsd), 1'234);
  EXPECT_EQ(to_minor_units(-12'345'000, kUsd), -1'235);
  EXPECT_EQ(to_minor_units(-12'344'999, kUsd), -1'234);
  EXPECT_EQ(to_minor_units(499'999, kJpy), 0);
  EXPECT_EQ(to_minor_units(500'000, kJpy), 1);
  EXPECT_EQ(to_minor_units(1'234'500, kKwd), 1'235);
  EXPECT_EQ(minor_units_text(1'235, kUsd), "12.35");
  EXPECT_EQ(minor_units_text(-7, kUsd), "-0.07");
  EXPECT_EQ(minor_units_text(5, kJpy), "5");
  EXPECT_EQ(minor_units_text(1'235, kKwd), "1.235");
  EXPECT_EQ(money_text(12'500'000, kUsd), "12.50 USD");
  EXPECT_EQ(money_text(12'500'000, kJpy), "13 JPY");
  EXPECT_EQ(exact_money_text(12'500'000, kUsd), "12.50 USD");
  EXPECT_EQ(exact_money_text(1, kUsd), "0.000001 USD");
  EXPECT_EQ(exact_money_text(12'501'000, kUsd), "12.501 USD");
  EXPECT_EQ(exact_money_text(-12'000'000, kJpy), "-12 JPY");
  EXPECT_EQ(exact_money_text(500'000, kJpy), "0.5 JPY");
}

TEST(Currency, ARoundingLineKeepsTheShownTotalTheLedgersTotalRoundedOnce) {
  // Three lines of 0.005 each: rounded one by one they show 0.03, while the ledger's total,
  // 0.015, rounds to 0.02. The rounding line takes the difference.
  const MinorAmounts shown = document_amounts(
      Invoice{.lines = lines_of({5'000, 5'000, 5'000}), .total_micros = 15'000}, kUsd);
  EXPECT_EQ(shown.lines, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(shown.subtotal, 3);
  EXPECT_EQ(shown.total, 2);
  EXPECT_EQ(shown.rounding, -1);
  EXPECT_EQ(shown.amount_due, 2);
  // Credits and what followed the total: each shown sum holds.
  const MinorAmounts prepaid = document_amounts(Invoice{.payments = {.paid_micros = 2'004'000},
                                                        .lines = lines_of({1'004'000, 2'004'000}),
                                                        .credits_micros = 4'000,
                                                        .total_micros = 3'004'000,
                                                        .credited_micros = 1'000'000},
                                                kUsd);
  EXPECT_EQ(prepaid.subtotal - prepaid.credits + prepaid.rounding, prepaid.total);
  EXPECT_EQ(prepaid.total, 300);
  EXPECT_EQ(prepaid.amount_due, 0);
}

}  // namespace
}  // namespace allot::billing
