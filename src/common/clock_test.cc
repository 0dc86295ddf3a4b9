#include "common/clock.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(ClockTest, TimeTextReadsBackExactly) {
  const TimeMs at = 1'800'000'000'123;
  EXPECT_EQ(parse_time(format_time(at)), at);
  EXPECT_EQ(parse_time("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_time("2026-12-01T09:30:00+00:00"), parse_time("2026-12-01T09:30:00.000Z"));
  EXPECT_EQ(*parse_time("2026-12-01T09:30:00.5Z") - *parse_time("2026-12-01T09:30:00Z"), 500);
}

TEST(ClockTest, AnythingElseIsNotATime) {
  for (const char* bad :
       {"", "2026-12-01", "2026-12-01T09:30:00", "2026-02-30T00:00:00Z", "2026-12-01T24:00:00Z",
        "2026-12-01T09:30:00+01:00", "2026-12-01T09:30:00.Z", "2026/12/01T09:30:00Z", "tomorrow"}) {
    EXPECT_FALSE(parse_time(bad)) << bad;
  }
}

}  // namespace
}  // namespace allot
