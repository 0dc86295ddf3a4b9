#include "common/random.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace allot {
namespace {

constexpr TimeMs kDec2026 = 1'796'083'200'000;  // 2026-12-01T00:00:00Z

TEST(RandomIdSource, IdsKeepTheirFormAndSortByWhenTheyWereDrawn) {
  ManualClock clock(kDec2026);
  RandomIdSource ids(clock);
  std::string last;
  std::set<std::string> seen;
  for (int i = 0; i < 20'000; ++i) {
    // Many draws in one millisecond, then the clock moves on, and once it steps back a second.
    if (i % 1000 == 999) clock.advance_ms(1);
    if (i == 12'000) clock.advance_ms(-1000);
    const std::string id = ids.new_id("ins");
    ASSERT_TRUE(is_valid_id(id, "ins")) << id;
    ASSERT_GT(id, last) << "draw " << i;
    seen.insert(id);
    last = id;
  }
  EXPECT_EQ(seen.size(), 20'000U);
}

TEST(RandomIdSource, AnIdDrawnLaterSortsAfterAnotherSourcesEarlierOnes) {
  ManualClock clock(kDec2026);
  RandomIdSource first(clock);
  RandomIdSource second(clock);
  const std::string early = first.new_id("ins");
  clock.advance_ms(1);
  EXPECT_GT(second.new_id("ins"), early);
  // Two sources in the same millisecond start at random points in it, so they do not draw the
  // same ids; a clash is refused by the core as a taken id rather than merging two objects.
  EXPECT_NE(first.new_id("ins"), second.new_id("ins"));
}

TEST(RandomIdSource, SecretsAreFortyHexDigitsAndNeverRepeat) {
  ManualClock clock(kDec2026);
  RandomIdSource ids(clock);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string secret = ids.new_secret();
    ASSERT_EQ(secret.size(), 46U);
    ASSERT_TRUE(secret.starts_with("allot_"));
    seen.insert(secret);
  }
  EXPECT_EQ(seen.size(), 1000U);
}

}  // namespace
}  // namespace allot
