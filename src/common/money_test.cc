#include "common/money.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(Money, ParsesAndFormatsExactly) {
  struct Case {
    const char* text;
    int64_t micros;
    const char* formatted;
  };
  const Case cases[] = {
      {"12.345678", 12'345'678, "12.345678"},
      {"12", 12'000'000, "12.000000"},
      {"0.5", 500'000, "0.500000"},
      {"-0.000001", -1, "-0.000001"},
      {"+3.1", 3'100'000, "3.100000"},
      {"9223372036854.775807", INT64_MAX, "9223372036854.775807"},
      {"-9223372036854.775808", INT64_MIN, "-9223372036854.775808"},
  };
  for (const Case& c : cases) {
    auto money = Money::parse(c.text);
    ASSERT_TRUE(money) << c.text;
    EXPECT_EQ(money->micros(), c.micros) << c.text;
    EXPECT_EQ(money->to_string(), c.formatted) << c.text;
  }
}

TEST(Money, RefusesTextThatIsNotAnExactAmount) {
  for (const char* text :
       {"", "-", "1.", ".5", "1.2345678", "1e6", "1,5", " 1", "1 ", "abc", "1.2.3", "--1"}) {
    auto money = Money::parse(text);
    ASSERT_FALSE(money) << text;
    EXPECT_EQ(money.error().code, ErrorCode::kInvalidArgument) << text;
  }
}

TEST(Money, RefusesAmountsBeyondInt64Micros) {
  for (const char* text : {"9223372036854.775808", "-9223372036854.775809", "99999999999999"}) {
    auto money = Money::parse(text);
    ASSERT_FALSE(money) << text;
    EXPECT_EQ(money.error().code, ErrorCode::kOverflow) << text;
  }
}

TEST(Money, ArithmeticIsCheckedNotWrapped) {
  const Money max = Money::from_micros(INT64_MAX);
  const Money min = Money::from_micros(INT64_MIN);
  EXPECT_EQ(max.plus(Money::from_micros(1)).error().code, ErrorCode::kOverflow);
  EXPECT_EQ(min.minus(Money::from_micros(1)).error().code, ErrorCode::kOverflow);
  EXPECT_EQ(max.times(2).error().code, ErrorCode::kOverflow);
  EXPECT_EQ(Money::from_micros(3).plus(Money::from_micros(4))->micros(), 7);
  EXPECT_EQ(Money::from_micros(3).minus(Money::from_micros(4))->micros(), -1);
  EXPECT_EQ(Money::from_micros(-3).times(4)->micros(), -12);
}

}  // namespace
}  // namespace allot
