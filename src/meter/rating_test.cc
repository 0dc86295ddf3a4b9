#include "meter/rating.h"

#include <random>

#include <gtest/gtest.h>

namespace allot::meter {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;
const PriceKey kH100{.model = "H100-80GB", .region = "eu", .price_class = PriceClass::kOnDemand};

TEST(ChargeRule, IsTheFloorOfRateTimesMilliTimesSecondsOverThreeMillionSixHundredThousand) {
  // $2.50 per GPU-hour, one whole GPU, one hour: exactly $2.50.
  EXPECT_EQ(stretch_charge(2'500'000, 1000, 3600), 2'500'000);
  // A quarter GPU for 7 seconds: 2,500,000 x 250 x 7 / 3,600,000 = 1215.27..., floored.
  EXPECT_EQ(stretch_charge(2'500'000, 250, 7), 1215);
  EXPECT_EQ(stretch_charge(2'500'000, 8000, 0), 0);
  EXPECT_EQ(stretch_charge(-1, 1000, 1).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(stretch_charge(INT64_MAX, 8000, INT64_MAX / 2).error().code, ErrorCode::kOverflow);
}

// Rating a stretch cumulatively (charging, each time, the charge so far less what was charged)
// gives the same total however it is split.
TEST(ChargeRule, PropertyRatingSplitAnywhereGivesTheSameTotal) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 1'000; ++round) {
    const auto rate = static_cast<int64_t>(rng() % 50'000'000);
    const auto milli = static_cast<int64_t>(1 + rng() % 8000);
    const auto seconds = static_cast<int64_t>(rng() % 3'000'000);
    int64_t charged = 0;
    for (int64_t at = 0; at < seconds;) {
      at = std::min<int64_t>(seconds, at + 1 + static_cast<int64_t>(rng() % 100'000));
      charged += *stretch_charge(rate, milli, at) - charged;
    }
    EXPECT_EQ(charged, *stretch_charge(rate, milli, seconds)) << round;
  }
}

TEST(Prices, ChangesApplyFromTheirTimeOnAndNeverBackwards) {
  PriceCatalog catalog;
  ASSERT_TRUE(catalog.add({.key = kH100, .effective_ms = kT0, .gpu_hour_micros = 2'000'000}, kT0));
  ASSERT_TRUE(catalog.add(
      {.key = kH100, .effective_ms = kT0 + 3'600'000, .gpu_hour_micros = 3'000'000}, kT0));
  EXPECT_EQ(catalog.at(kH100, kT0 - 1), nullptr);
  EXPECT_EQ(catalog.at(kH100, kT0 + 3'599'999)->gpu_hour_micros, 2'000'000);
  EXPECT_EQ(catalog.at(kH100, kT0 + 3'600'000)->gpu_hour_micros, 3'000'000);
  // Backwards, duplicated, unnamed or negative: refused.
  EXPECT_EQ(
      catalog.add({.key = kH100, .effective_ms = kT0 - 1, .gpu_hour_micros = 1}, kT0).error().code,
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      catalog.add({.key = kH100, .effective_ms = kT0, .gpu_hour_micros = 1}, kT0).error().code,
      ErrorCode::kAlreadyExists);
  EXPECT_FALSE(catalog.add({.key = {.model = "", .region = "eu"}, .effective_ms = kT0}, kT0));
  EXPECT_FALSE(
      catalog.add({.key = {.model = "H100-80GB", .region = ""}, .effective_ms = kT0}, kT0));
  EXPECT_FALSE(catalog.add({.key = kH100, .effective_ms = kT0 + 1, .gpu_hour_micros = -5}, kT0));
}

TEST(Prices, AnIntervalIsRatedInStretchesCutAtPriceChanges) {
  PriceCatalog catalog;
  const int64_t t0_s = kT0 / 1000;
  ASSERT_TRUE(catalog.add({.key = kH100, .effective_ms = kT0, .gpu_hour_micros = 2'000'000}, kT0));
  ASSERT_TRUE(catalog.add(
      {.key = kH100, .effective_ms = kT0 + 1'800'000, .gpu_hour_micros = 4'000'000}, kT0));
  const auto parts = catalog.stretches(kH100, t0_s, t0_s + 3600);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].end_s - parts[0].start_s, 1800);
  EXPECT_EQ(parts[1].price->gpu_hour_micros, 4'000'000);
  // Two whole GPUs for an hour: half at 2, half at 4 per GPU-hour = 2 + 4 = 6.
  EXPECT_EQ(usage_charge(catalog, kH100, 2000, 0, 0, t0_s, t0_s + 3600), 6'000'000);
  // Before any price: not charged.
  EXPECT_EQ(usage_charge(catalog, kH100, 1000, 0, 0, t0_s - 100, t0_s), 0);
}

TEST(Prices, CpuAndMemoryArePricedPerCpuHourAndGibHour) {
  PriceCatalog catalog;
  ASSERT_TRUE(catalog.add({.key = kH100,
                           .effective_ms = kT0,
                           .gpu_hour_micros = 0,
                           .cpu_hour_micros = 10'000,
                           .memory_gib_hour_micros = 5'000},
                          kT0));
  // 8 CPUs and 64 GiB for an hour: 8 x 0.01 + 64 x 0.005 = 0.40.
  EXPECT_EQ(usage_charge(catalog, kH100, 0, 8000, 65'536, kT0 / 1000, kT0 / 1000 + 3600), 400'000);
}

// The stretches that second-by-second pricing through `price_at` gives: a second costs the price
// in force when it begins, and consecutive seconds at one price form one stretch.
template <typename PriceAt>
std::vector<Stretch> by_second(PriceAt price_at, int64_t start, int64_t end) {
  std::vector<Stretch> out;
  for (int64_t second = start; second < end; ++second) {
    const Price* price = price_at(second * 1000);
    if (price == nullptr) continue;
    if (!out.empty() && out.back().price == price && out.back().end_s == second) {
      ++out.back().end_s;
    } else {
      out.push_back({.start_s = second, .end_s = second + 1, .price = price});
    }
  }
  return out;
}

void add_random_prices(PriceCatalog& catalog, const PriceKey& key, std::mt19937_64& rng) {
  const int changes = 1 + static_cast<int>(rng() % 20);
  for (int c = 0; c < changes; ++c) {
    (void)catalog.add({.key = key,
                       .effective_ms = kT0 + static_cast<TimeMs>(rng() % 600'000),
                       .gpu_hour_micros = static_cast<int64_t>(rng() % 9'000'000)},
                      kT0);
  }
}

void expect_same(const std::vector<Stretch>& got, const std::vector<Stretch>& expected, int round) {
  ASSERT_EQ(got.size(), expected.size()) << round;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start_s, expected[i].start_s) << round;
    EXPECT_EQ(got[i].end_s, expected[i].end_s) << round;
    EXPECT_EQ(got[i].price, expected[i].price) << round;
  }
}

TEST(Prices, PropertyStretchesMatchPricingSecondBySecond) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    PriceCatalog catalog;
    add_random_prices(catalog, kH100, rng);
    const int64_t start = kT0 / 1000 - 10 + static_cast<int64_t>(rng() % 300);
    const int64_t end = start + static_cast<int64_t>(rng() % 700);
    expect_same(catalog.stretches(kH100, start, end),
                by_second([&](TimeMs at) { return catalog.at(kH100, at); }, start, end), round);
  }
}

TEST(Prices, SpotIsChargedOnlyItsOwnPriceUnlessTheOperatorLetsItFallBackToOnDemand) {
  PriceCatalog catalog;
  const PriceKey spot{
      .model = kH100.model, .region = kH100.region, .price_class = PriceClass::kSpot};
  const int64_t t0_s = kT0 / 1000;
  ASSERT_TRUE(catalog.add({.key = kH100, .effective_ms = kT0, .gpu_hour_micros = 3'000'000}, kT0));
  ASSERT_TRUE(catalog.add(
      {.key = spot, .effective_ms = kT0 + 1'800'000, .gpu_hour_micros = 1'000'000}, kT0));
  // Off: the first half hour has no spot price, so there is nothing to charge it at.
  EXPECT_EQ(catalog.charged(spot, kT0), nullptr);
  EXPECT_EQ(usage_charge(catalog, spot, 1000, 0, 0, t0_s, t0_s + 3600), 500'000);
  // On: the first half hour at the on-demand 3.00, the second at the spot 1.00.
  catalog.set_spot_falls_back(true);
  EXPECT_EQ(catalog.charged(spot, kT0)->gpu_hour_micros, 3'000'000);
  EXPECT_EQ(catalog.charged(spot, kT0 + 1'800'000)->gpu_hour_micros, 1'000'000);
  EXPECT_EQ(usage_charge(catalog, spot, 1000, 0, 0, t0_s, t0_s + 3600), 2'000'000);
  // On-demand work never falls to another class.
  EXPECT_EQ(catalog.charged(kH100, kT0 - 1), nullptr);
}

TEST(Prices, PropertyFallbackStretchesMatchChargedPricingSecondBySecond) {
  std::mt19937_64 rng(11);
  const PriceKey spot{
      .model = kH100.model, .region = kH100.region, .price_class = PriceClass::kSpot};
  for (int round = 0; round < 200; ++round) {
    PriceCatalog catalog;
    catalog.set_spot_falls_back(true);
    add_random_prices(catalog, kH100, rng);
    add_random_prices(catalog, spot, rng);
    const int64_t start = kT0 / 1000 - 10 + static_cast<int64_t>(rng() % 300);
    const int64_t end = start + static_cast<int64_t>(rng() % 700);
    expect_same(catalog.charged_stretches(spot, start, end),
                by_second([&](TimeMs at) { return catalog.charged(spot, at); }, start, end), round);
  }
}

TEST(StoragePrices, AreKeptApartFromGpuPricesAndChargedPerGbMonthOf730Hours) {
  PriceCatalog catalog;
  const PriceKey eu = storage_key("eu");
  ASSERT_TRUE(
      catalog.add(Price{.key = eu, .effective_ms = kT0, .storage_gb_month_micros = 100'000}, kT0));
  EXPECT_TRUE(catalog.prices().empty());  // What walks the GPU prices never meets one.
  ASSERT_EQ(catalog.storage_prices().size(), 1U);
  const auto stretches = catalog.stretches(eu, kT0 / 1000, kT0 / 1000 + 3600);
  ASSERT_EQ(stretches.size(), 1U);
  // $0.10 per GB-month, 7 GB, one hour: 100,000 x 7 x 3,600 / 2,628,000 = 958.90..., floored.
  EXPECT_EQ(storage_charge(stretches, 7), 958);
  // A whole month of 730 hours is the rate times the size, exactly.
  EXPECT_EQ(storage_charge(catalog.stretches(eu, kT0 / 1000, kT0 / 1000 + int64_t{730} * 3600), 7),
            700'000);
  // A storage price carries only its own rate; a GPU price never a storage rate.
  EXPECT_EQ(catalog.add(Price{.key = eu, .effective_ms = kT0 + 1, .gpu_hour_micros = 1}, kT0)
                .error()
                .code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(catalog.add(Price{.key = kH100, .effective_ms = kT0, .storage_gb_month_micros = 1}, kT0)
                .error()
                .code,
            ErrorCode::kInvalidArgument);
  PriceKey spot = eu;
  spot.price_class = PriceClass::kSpot;
  EXPECT_FALSE(
      catalog.add(Price{.key = spot, .effective_ms = kT0, .storage_gb_month_micros = 1}, kT0));
}

}  // namespace
}  // namespace allot::meter
