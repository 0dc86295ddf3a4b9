#include "common/base64.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(Base64, RoundTripsAnyBytes) {
  for (const std::string& bytes : {std::string(""), std::string("a"), std::string("ab"),
                                   std::string("abc"), std::string("\0\xff\x80 log line\n", 13)}) {
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    EXPECT_EQ(base64_decode(text).value(), bytes);
  }
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
}

TEST(Base64, RefusesTextThatIsNotBase64) {
  EXPECT_FALSE(base64_decode("abc"));
  EXPECT_FALSE(base64_decode("ab!="));
  // More padding than base64 has: once, it took the size below zero and threw.
  EXPECT_FALSE(base64_decode("===="));
  EXPECT_FALSE(base64_decode("A==="));
  EXPECT_FALSE(base64_decode("AAAA===="));
}

}  // namespace
}  // namespace allot
