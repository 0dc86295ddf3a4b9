// rank_quote: the order, the exclusions and the reasons, as tables; and the latency table's
// commands.
#include "core/admission/quote.h"

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/regions/regions.h"

namespace allot {
namespace {

// An option that fits, priced per hour (per GPU-hour the same: one GPU), with carbon in mg/h and
// latency in ms where given (negative: unknown).
QuoteOption option(std::string region, int64_t price, int64_t carbon_mg = -1,
                   int64_t latency_ms = -1, bool fits = true) {
  QuoteOption o{.region = std::move(region), .gpu_model = "H100-80GB", .fits = fits};
  o.free_gpus = fits ? 8 : 0;
  if (price >= 0) {
    o.price_micros_per_gpu_hour = price;
    o.price_micros_per_hour = price;
  }
  if (carbon_mg >= 0) o.carbon_mg_per_hour = carbon_mg;
  if (latency_ms >= 0) o.latency_ms = latency_ms;
  return o;
}

constexpr int64_t kUnit = 1'000'000;

struct RankCase {
  std::string name;
  std::vector<QuoteOption> options;
  RegionWishes wishes;
  std::vector<std::string> order;                                  // Regions, best first.
  std::vector<std::pair<std::string, std::string>> excluded = {};  // Region, reason.
  std::string first_why = "";                                      // Empty: not checked.
};

class RankQuoteTest : public ::testing::TestWithParam<RankCase> {};

TEST_P(RankQuoteTest, RanksAsSpecified) {
  const RankCase& c = GetParam();
  // The order the options come in must not matter: rank them as given and reversed.
  for (bool reversed : {false, true}) {
    std::vector<QuoteOption> options = c.options;
    if (reversed) std::reverse(options.begin(), options.end());
    const Quote quote = rank_quote(options, c.wishes);
    std::vector<std::string> order;
    order.reserve(quote.ranked.size());
    for (const RankedOption& r : quote.ranked) {
      order.push_back(r.option.region);
      EXPECT_EQ(r.rank, static_cast<int>(order.size()));
      EXPECT_FALSE(r.why.empty());
    }
    EXPECT_EQ(order, c.order);
    std::vector<std::pair<std::string, std::string>> excluded;
    excluded.reserve(quote.excluded.size());
    for (const ExcludedOption& e : quote.excluded) excluded.emplace_back(e.option.region, e.reason);
    EXPECT_EQ(excluded, c.excluded);
    if (!c.first_why.empty()) {
      ASSERT_FALSE(quote.ranked.empty());
      EXPECT_EQ(quote.ranked.front().why, c.first_why);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RankQuoteTest,
    ::testing::Values(
        RankCase{.name = "ByPriceTheCheapestComesFirstAndSaysByHowMuch",
                 .options = {option("us", 3 * kUnit), option("eu", 2'400'000),
                             option("asia", 4 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice},
                 .order = {"eu", "us", "asia"},
                 .first_why = "cheapest: 2.400000/h, 0.600000 below next"},
        RankCase{.name = "NoPreferenceRanksByPrice",
                 .options = {option("us", 3 * kUnit), option("eu", 2 * kUnit)},
                 .wishes = {},
                 .order = {"eu", "us"}},
        RankCase{.name = "ByCarbonTheCleanestComesFirstWhateverItCosts",
                 .options = {option("eu", 2 * kUnit, 500'000), option("north", 5 * kUnit, 20'000),
                             option("us", 3 * kUnit, 300'000)},
                 .wishes = {.prefer = Prefer::kCarbon},
                 .order = {"north", "us", "eu"},
                 .first_why = "cleanest: 20.000 g/h, 280.000 g/h below next"},
        RankCase{.name = "ByLatencyTheClosestComesFirst",
                 .options = {option("eu", 2 * kUnit, -1, 15), option("us", 1 * kUnit, -1, 90)},
                 .wishes = {.prefer = Prefer::kLatency, .from = "eu-users"},
                 .order = {"eu", "us"},
                 .first_why = "closest: 15 ms, 75 ms below next"},
        RankCase{.name = "EqualMeasuresAreBrokenByPriceThenByName",
                 .options = {option("b", 3 * kUnit, 100'000), option("c", 2 * kUnit, 100'000),
                             option("a", 3 * kUnit, 100'000)},
                 .wishes = {.prefer = Prefer::kCarbon},
                 .order = {"c", "a", "b"},
                 .first_why = "cleanest: 100.000 g/h, tied with next, ahead by price"},
        RankCase{.name = "PlacesWithNoRoomNowComeAfterThoseThatFit",
                 .options = {option("eu", 1 * kUnit, -1, -1, false), option("us", 3 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice},
                 .order = {"us", "eu"}},
        RankCase{.name = "AnUnknownMeasureRanksAfterTheKnownOnes",
                 .options = {option("eu", 1 * kUnit), option("us", 3 * kUnit, 400'000)},
                 .wishes = {.prefer = Prefer::kCarbon},
                 .order = {"us", "eu"}},
        RankCase{.name = "AnUnpricedPlaceIsLeftOutSinceWorkThereWouldGoUncharged",
                 .options = {option("eu", -1), option("us", 3 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice},
                 .order = {"us"},
                 .excluded = {{"eu", "no on-demand price set"}}},
        RankCase{.name = "AMaximumPriceExcludesWhatCostsMore",
                 .options = {option("eu", 2 * kUnit), option("us", 4 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice, .max_price_micros = 3 * kUnit},
                 .order = {"eu"},
                 .excluded = {{"us", "over max price 3.000000"}}},
        RankCase{.name = "APlaceWithNoPriceDoesNotMeetAMaximum",
                 .options = {option("eu", -1), option("us", 2 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice, .max_price_micros = 3 * kUnit},
                 .order = {"us"},
                 .excluded = {{"eu", "no on-demand price set"}}},
        RankCase{.name = "SpotWorkHasNoPlaceWhereNoSpotPriceIsCharged",
                 .options = {option("eu", -1)},
                 .wishes = {.price_class = PriceClass::kSpot},
                 .order = {},
                 .excluded = {{"eu", "no spot price set"}}},
        RankCase{.name = "APriceAtTheMaximumIsAllowed",
                 .options = {option("eu", 3 * kUnit)},
                 .wishes = {.max_price_micros = 3 * kUnit},
                 .order = {"eu"}},
        RankCase{.name = "AllowedRegionsExcludeTheOthersEvenWhenCheaper",
                 .options = {option("eu", 3 * kUnit), option("us", 1 * kUnit)},
                 .wishes = {.prefer = Prefer::kPrice, .regions = {"eu"}},
                 .order = {"eu"},
                 .excluded = {{"us", "not in allowed regions"}}},
        RankCase{.name = "PreferringLatencyExcludesRegionsWithNoLatencyKnown",
                 .options = {option("eu", 3 * kUnit, -1, 20), option("us", 1 * kUnit)},
                 .wishes = {.prefer = Prefer::kLatency, .from = "eu-users"},
                 .order = {"eu"},
                 .excluded = {{"us", "no latency known from eu-users"}}},
        RankCase{.name = "TheRegionLimitIsNamedBeforeThePriceLimit",
                 .options = {option("us", 9 * kUnit)},
                 .wishes = {.max_price_micros = 3 * kUnit, .regions = {"eu"}},
                 .order = {},
                 .excluded = {{"us", "not in allowed regions"}}}),
    [](const ::testing::TestParamInfo<RankCase>& info) { return info.param.name; });

struct WishCase {
  std::string name;
  RegionWishes wishes;
  ErrorCode code;
};

class CheckWishesTest : public ::testing::TestWithParam<WishCase> {};

TEST_P(CheckWishesTest, RefusesWithItsCode) {
  const auto ok = check_wishes(GetParam().wishes);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, GetParam().code) << ok.error().message;
}

std::vector<std::string> many_regions() {
  std::vector<std::string> out;
  for (int i = 0; i <= 64; ++i) out.push_back("r" + std::to_string(i));
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CheckWishesTest,
    ::testing::Values(
        WishCase{
            "LatencyWithoutALocation", {.prefer = Prefer::kLatency}, ErrorCode::kInvalidArgument},
        WishCase{"ANegativeMaximumPrice", {.max_price_micros = -1}, ErrorCode::kInvalidArgument},
        WishCase{"AnEmptyRegionName", {.regions = {"eu", ""}}, ErrorCode::kInvalidArgument},
        WishCase{"ARegionNameWithASpace", {.regions = {"eu west"}}, ErrorCode::kInvalidArgument},
        WishCase{"ARegionNamedTwice", {.regions = {"eu", "eu"}}, ErrorCode::kInvalidArgument},
        WishCase{"TooManyRegions", {.regions = many_regions()}, ErrorCode::kLimitExceeded}),
    [](const ::testing::TestParamInfo<WishCase>& info) { return info.param.name; });

TEST(WishesTest, AcceptsAPreferenceWithItsLocationAndLimits) {
  EXPECT_TRUE(check_wishes({.prefer = Prefer::kLatency,
                            .from = "eu-users",
                            .max_price_micros = 3 * kUnit,
                            .regions = {"eu", "eu-north"}}));
}

TEST(LatencyTableTest, EntriesAreSetReplacedAndDeletedAndBadOnesChangeNothing) {
  Core core;
  ASSERT_TRUE(core.apply(SetLatency{.from = "eu-users", .region = "eu", .rtt_ms = 12}, 10));
  ASSERT_TRUE(core.apply(SetLatency{.from = "eu-users", .region = "eu", .rtt_ms = 9}, 20));
  EXPECT_EQ(core.state().latency("eu-users", "eu")->rtt_ms, 9);
  const auto before = core.state().latencies;
  for (const SetLatency& bad : {SetLatency{.from = "", .region = "eu", .rtt_ms = 1},
                                SetLatency{.from = "x", .region = "a,b", .rtt_ms = 1},
                                SetLatency{.from = "x", .region = "eu", .rtt_ms = -1},
                                SetLatency{.from = "x", .region = "eu", .rtt_ms = 60'001}}) {
    const auto refused = core.apply(bad, 30);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(core.state().latencies, before);
  EXPECT_EQ(core.apply(DeleteLatency{.from = "us-users", .region = "eu"}, 40).error().code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(core.apply(DeleteLatency{.from = "eu-users", .region = "eu"}, 50));
  EXPECT_EQ(core.state().latency("eu-users", "eu"), nullptr);
}

}  // namespace
}  // namespace allot
