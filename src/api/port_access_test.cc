#include "api/port_access.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(CookiePairs, SplitsAHeaderIntoItsPairsWithoutSpacesOrEmptyOnes) {
  EXPECT_EQ(cookie_pairs(" theme=dark ;; allot_link=abc;x=1 "),
            (std::vector<std::string_view>{"theme=dark", "allot_link=abc", "x=1"}));
  EXPECT_TRUE(cookie_pairs("").empty());
  EXPECT_TRUE(cookie_pairs(" ; ;").empty());
}

TEST(LinkCookie, FindsOnlyTheLinkCookieByItsWholeName) {
  EXPECT_EQ(link_cookie("theme=dark; allot_link=abc"), "abc");
  EXPECT_EQ(link_cookie("my_allot_link=abc; allot_links=def"), "");
  EXPECT_EQ(link_cookie(""), "");
}

TEST(ParsePortPath, NamesTheInstanceAndPortAndRefusesOthers) {
  auto path = parse_port_path("/i/ins_1/8888/lab?allot_link=t&x=1");
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(path->instance_id, "ins_1");
  EXPECT_EQ(path->port, 8888);
  EXPECT_EQ(path->link, "t");
  EXPECT_EQ(path->target, "/lab?x=1");
  EXPECT_FALSE(path->bare);
  EXPECT_EQ(parse_port_path("/i/ins_1/0/").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_port_path("/i/ins_1/65536/").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_port_path("/i/ins_1").error().code, ErrorCode::kNotFound);
  auto bare = parse_port_path("/i/ins_1/8888");
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->bare);
}

}  // namespace
}  // namespace allot
