#include "common/json_depth.h"

#include <string>

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(JsonDepthTest, NestingIsCountedOutsideStringsOnly) {
  EXPECT_FALSE(json_deeper_than(R"({"a": [1, {"b": []}]})", 4));
  EXPECT_TRUE(json_deeper_than(R"({"a": [1, {"b": []}]})", 3));
  EXPECT_FALSE(json_deeper_than(R"({"a": "[[[[[[\"[[[["})", 1));  // Brackets in a string.
  EXPECT_FALSE(json_deeper_than(R"(["\\", "[[["])", 1));          // An escaped backslash ends.
  EXPECT_FALSE(json_deeper_than("]]]]}}}", 0));                   // Unbalanced closes.
}

TEST(JsonDepthTest, ADeepDocumentIsNotParsedAtAll) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_TRUE(parse_outside_json(deep).is_discarded());
  const std::string shallow = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_FALSE(parse_outside_json(shallow).is_discarded());
  EXPECT_TRUE(parse_outside_json("{").is_discarded());
}

}  // namespace
}  // namespace allot
