#include "api/request.h"

#include <gtest/gtest.h>

#include "common/url.h"

namespace allot {
namespace {

TEST(ParseTarget, SplitsPathAndDecodesQuery) {
  auto target = parse_target("/v1/projects/prj_1?tenant_id=ten%5Fx&limit=5&flag");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->path, "/v1/projects/prj_1");
  EXPECT_EQ(target->segments, (std::vector<std::string>{"v1", "projects", "prj_1"}));
  EXPECT_EQ(target->query.at("tenant_id"), "ten_x");
  EXPECT_EQ(target->query.at("limit"), "5");
  EXPECT_EQ(target->query.at("flag"), "");
}

TEST(ParseTarget, RefusesBrokenEscapes) {
  for (const char* text : {"/v1/a%", "/v1/a%zz", "/v1?x=%4"}) {
    auto target = parse_target(text);
    ASSERT_FALSE(target) << text;
    EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(ParseTarget, RefusesAQueryParameterGivenTwice) {
  // However the repeat is spelled: the same name, or the same name once percent-encoded.
  for (const char* text : {"/v1/x?limit=1&limit=2", "/v1/x?a=1&b=2&a=1", "/v1/x?flag&flag",
                           "/v1/x?limit=1&%6Cimit=2"}) {
    auto target = parse_target(text);
    ASSERT_FALSE(target) << text;
    EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument) << text;
  }
}

TEST(JsonBody, ReportsTheFirstProblem) {
  struct Case {
    const char* body;
    ErrorCode code;
  };
  const Case cases[] = {
      {"", ErrorCode::kMalformedJson},
      {"{", ErrorCode::kMalformedJson},
      {"[1]", ErrorCode::kMalformedJson},
      {"\"name\"", ErrorCode::kMalformedJson},
      {"{}", ErrorCode::kMissingField},
      {R"({"name": 5})", ErrorCode::kInvalidType},
      {R"({"name": "a", "disabled": "yes"})", ErrorCode::kInvalidType},
      {R"({"name": "a", "other": 1})", ErrorCode::kUnknownField},
  };
  for (const Case& c : cases) {
    JsonBody body(c.body);
    body.required_string("name");
    body.optional_bool("disabled");
    auto status = body.finish();
    ASSERT_FALSE(status) << c.body;
    EXPECT_EQ(status.error().code, c.code) << c.body;
  }
  JsonBody good(R"({"name": "a", "disabled": true})");
  EXPECT_EQ(good.required_string("name"), "a");
  EXPECT_EQ(good.optional_bool("disabled"), true);
  EXPECT_TRUE(good.finish());
}

TEST(JsonBody, ReadsSeveralStringFieldsInOrder) {
  JsonBody body(R"({"a": "1", "b": "2", "d": "4"})");
  const auto [a, b] = body.required_string_fields({"a", "b"});
  const auto [c, d] = body.optional_string_fields({"c", "d"});
  EXPECT_EQ(a, "1");
  EXPECT_EQ(b, "2");
  EXPECT_EQ(c, std::nullopt);
  EXPECT_EQ(d, "4");
  EXPECT_TRUE(body.finish());

  // The first field missing is the one reported.
  JsonBody missing(R"({"a": "1"})");
  (void)missing.required_string_fields({"a", "b", "c"});
  auto status = missing.finish();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kMissingField);
  EXPECT_NE(status.error().message.find("'b'"), std::string::npos) << status.error().message;
}

TEST(ReadPage, ChecksLimitAndUnknownParameters) {
  auto target = parse_target("/v1/x?limit=0");
  EXPECT_EQ(read_page(*target, {}).error().code, ErrorCode::kInvalidArgument);
  target = parse_target("/v1/x?limit=1001");
  EXPECT_EQ(read_page(*target, {}).error().code, ErrorCode::kInvalidArgument);
  target = parse_target("/v1/x?limit=5x");
  EXPECT_EQ(read_page(*target, {}).error().code, ErrorCode::kInvalidArgument);
  target = parse_target("/v1/x?colour=red");
  EXPECT_EQ(read_page(*target, {}).error().code, ErrorCode::kUnknownField);
  target = parse_target("/v1/x?limit=7&after=abc&colour=red");
  auto page = read_page(*target, {"colour"});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->limit, 7);
  EXPECT_EQ(page->after, "abc");
}

TEST(ParseTarget, DecodesWhatPercentEncodeWrote) {
  const std::string value = "eu users\nfra/1 & 100%+";
  auto target = parse_target("/v1/x?from=" + percent_encode(value));
  ASSERT_TRUE(target);
  EXPECT_EQ(target->query.at("from"), value);
  EXPECT_EQ(percent_encode("nod_1a-b.c~d"), "nod_1a-b.c~d");
}

TEST(ReadChoice, AcceptsOnlyANamedChoice) {
  const std::string_view states[] = {"queued", "running"};
  auto target = parse_target("/v1/x?state=running");
  EXPECT_EQ(read_choice(*target, "state", states).value(), "running");
  target = parse_target("/v1/x");
  EXPECT_EQ(read_choice(*target, "state", states).value(), std::nullopt);
  target = parse_target("/v1/x?state=bogus");
  auto refused = read_choice(*target, "state", states);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message, "state must be one of queued, running");
}

}  // namespace
}  // namespace allot
