#include "api/answer_head.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(AnswerHead, TheHeaderSectionEndsAtItsBlankLineWhateverItsLinesEndIn) {
  EXPECT_EQ(answer_head_end("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody"), 25u);
  EXPECT_EQ(answer_head_end("HTTP/1.1 200 OK\nA: b\n\nbody"), 22u);
  EXPECT_EQ(answer_head_end("HTTP/1.1 200 OK\nA: b\r\n\r\n"), 24u);
  EXPECT_EQ(answer_head_end("HTTP/1.1 200 OK\r\nA: b\r\n"), std::nullopt);
  EXPECT_EQ(answer_head_end(""), std::nullopt);
}

TEST(AnswerHead, BareLineFeedsBecomeCrlfAndCrlfStaysAsItIs) {
  EXPECT_EQ(with_crlf("HTTP/1.1 200 OK\nA: b\n\n"), "HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
  EXPECT_EQ(with_crlf("HTTP/1.1 200 OK\r\nA: b\r\n\r\n"), "HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
  EXPECT_EQ(with_crlf("\n"), "\r\n");
}

}  // namespace
}  // namespace allot
