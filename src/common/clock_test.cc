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

TEST(ClockTest, MonthsAreUtcCalendarMonths) {
  const TimeMs dec = *parse_time("2026-12-01T00:00:00Z");
  const TimeMs jan = *parse_time("2027-01-01T00:00:00Z");
  EXPECT_EQ(month_start(*parse_time("2026-12-31T23:59:59.999Z")), dec);
  EXPECT_EQ(next_month_start(dec), jan);
  EXPECT_EQ(next_month_start(*parse_time("2028-02-10T00:00:00Z")),
            *parse_time("2028-03-01T00:00:00Z"));
  EXPECT_EQ(format_month(jan - 1), "2026-12");
  EXPECT_EQ(parse_month("2026-12"), dec);
  for (const char* bad : {"", "2026-13", "2026-1", "2026-00", "26-12", "2026/12", "2026-12-01"}) {
    EXPECT_FALSE(parse_month(bad)) << bad;
  }
}

}  // namespace
}  // namespace allot
