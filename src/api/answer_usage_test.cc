// Tokens read from replicas' answers: the header first, then a JSON answer's usage or a stream's
// last usage; what cannot be read is malformed, and an answer without usage has none.
#include "api/answer_usage.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

AnswerTap json_answer(std::string body) {
  AnswerTap tap{.status = 200, .content_type = "application/json"};
  tap.see(body);
  return tap;
}

TEST(AnswerUsage, AJsonAnswersUsageCountsItsTotalOrItsParts) {
  EXPECT_EQ(count_tokens(json_answer(R"({"usage": {"total_tokens": 42}})")).tokens, 42);
  EXPECT_EQ(count_tokens(json_answer(R"({"usage": {"prompt_tokens": 40, "completion_tokens": 2}})"))
                .tokens,
            42);
  EXPECT_EQ(count_tokens(json_answer(R"({"usage": {"prompt_tokens": 7}})")).tokens, 7);
  // No usage, or not JSON at all: nothing to bill, nothing wrong.
  for (const char* none : {R"({"choices": []})", R"({"usage": null})", "plain text", "[1, 2]"}) {
    const TokenCount count = count_tokens(json_answer(none));
    EXPECT_EQ(count.tokens, 0) << none;
    EXPECT_FALSE(count.malformed) << none;
  }
}

TEST(AnswerUsage, AUsageThatCannotBeReadIsMalformedAndCountsNothing) {
  for (const char* bad :
       {R"({"usage": {"total_tokens": "many"}})", R"({"usage": {"total_tokens": -1}})",
        R"({"usage": {"total_tokens": 1.5}})", R"({"usage": 5})", R"({"usage": {}})",
        R"({"usage": {"prompt_tokens": 1, "completion_tokens": "x"}})",
        R"({"usage": {"total_tokens": 99999999999999999}})"}) {
    const TokenCount count = count_tokens(json_answer(bad));
    EXPECT_TRUE(count.malformed) << bad;
    EXPECT_EQ(count.tokens, 0) << bad;
    EXPECT_FALSE(count.why.empty()) << bad;
  }
}

TEST(AnswerUsage, ACompressedAnswerIsUnreadableWithItsReasonNeverZeroTokens) {
  // Bytes of a gzip stream: whatever they hold, they are not read as "no usage".
  AnswerTap tap = json_answer(std::string("\x1f\x8b\x08\x00", 4) + "compressed");
  tap.content_encoding = "gzip";
  const TokenCount count = count_tokens(tap);
  EXPECT_TRUE(count.malformed);
  EXPECT_NE(count.why.find("Content-Encoding: gzip"), std::string::npos) << count.why;
  // The header still counts when the replica sends one.
  tap.has_tokens_header = true;
  tap.tokens_header = "12";
  EXPECT_EQ(count_tokens(tap).tokens, 12);
  // Identity is no compression.
  AnswerTap plain = json_answer(R"({"usage": {"total_tokens": 42}})");
  plain.content_encoding = "identity";
  EXPECT_EQ(count_tokens(plain).tokens, 42);
}

TEST(AnswerUsage, TheHeaderComesFirstAndMustBeACount) {
  AnswerTap tap = json_answer(R"({"usage": {"total_tokens": 42}})");
  tap.has_tokens_header = true;
  tap.tokens_header = "7";
  EXPECT_EQ(count_tokens(tap).tokens, 7);
  for (const char* bad : {"", "-3", "7 tokens", "0x10", "1e3"}) {
    tap.tokens_header = bad;
    EXPECT_TRUE(count_tokens(tap).malformed) << bad;
  }
}

TEST(AnswerUsage, AStreamsLastEventWithUsageCounts) {
  AnswerTap tap{.status = 200, .content_type = "text/event-stream; charset=utf-8"};
  tap.see("data: {\"choices\": [{\"delta\": {}}], \"usage\": null}\n\n");
  tap.see("data: {\"choices\": [], \"usage\": {\"total_tokens\": 9}}\r\n\r\n");
  tap.see("data: [DONE]\n\n");
  EXPECT_EQ(count_tokens(tap).tokens, 9);
  AnswerTap none{.status = 200, .content_type = "text/event-stream"};
  none.see("data: {\"choices\": []}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(count_tokens(none).tokens, 0);
  EXPECT_FALSE(count_tokens(none).malformed);
}

TEST(AnswerUsage, ALongAnswerKeepsItsEndWhereTheUsageIs) {
  AnswerTap tap{.status = 200, .content_type = "application/json"};
  tap.see(R"({"data": [")");
  tap.see(std::string(AnswerTap::kKeep, 'x'));
  tap.see(R"("], "usage": {"prompt_tokens": 5, "total_tokens": 5, "details": {"a": 1}}})");
  EXPECT_TRUE(tap.truncated);
  EXPECT_LE(tap.body.size(), AnswerTap::kKeep);
  const TokenCount count = count_tokens(tap);
  EXPECT_FALSE(count.malformed) << count.why;
  EXPECT_EQ(count.tokens, 5);
  AnswerTap cut{.status = 200, .content_type = "application/json"};
  cut.see(std::string(AnswerTap::kKeep + 10, 'y'));
  EXPECT_TRUE(count_tokens(cut).malformed);
}

}  // namespace
}  // namespace allot
