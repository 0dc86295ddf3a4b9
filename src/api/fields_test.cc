#include "api/fields.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(ParseScaled, ReadsExactDecimalsIntoScaledIntegers) {
  EXPECT_EQ(parse_scaled("pue", "1.3", 3), 1'300);
  EXPECT_EQ(parse_scaled("pue", "2", 3), 2'000);
  EXPECT_EQ(parse_scaled("annual_rate", "0.065", 6), 65'000);
  EXPECT_EQ(parse_scaled("annual_rate", "0.000001", 6), 1);
  EXPECT_EQ(parse_scaled("x", "-1.5", 1, /*allow_negative=*/true), -15);
  EXPECT_EQ(parse_scaled("x", "007", 0), 7);
}

TEST(ParseScaled, RefusesGarbageExtraDigitsNegativesAndOverflowNamingTheField) {
  for (const char* text : {"", ".5", "5.", "1.2.3", "1,5", "ten", "1e3", " 1", "+1", "--1"}) {
    auto parsed = parse_scaled("pue", text, 3);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.error().message.find("'pue'"), std::string::npos) << parsed.error().message;
  }
  EXPECT_EQ(parse_scaled("pue", "1.0001", 3).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_scaled("pue", "-1", 3).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_scaled("pue", "9223372036854775807", 3).error().code, ErrorCode::kOverflow);
}

TEST(FormatScaled, WritesEveryDecimal) {
  EXPECT_EQ(format_scaled(1'300, 3), "1.300");
  EXPECT_EQ(format_scaled(85'416, 6), "0.085416");
  EXPECT_EQ(format_scaled(-15, 1), "-1.5");
  EXPECT_EQ(format_scaled(7, 0), "7");
  EXPECT_EQ(divide_rounded(1'800, 3'600), 1);
  EXPECT_EQ(divide_rounded(1'799, 3'600), 0);
}

TEST(CsvLine, LeavesNumbersAndGuardsText) {
  EXPECT_EQ(csv_line({"gpu-1", "-5.000000", "", "=cmd", "a,b"}),
            "gpu-1,-5.000000,,'=cmd,\"a,b\"\r\n");
}

}  // namespace
}  // namespace allot
