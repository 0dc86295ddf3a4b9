#include "api/cors.h"

#include <algorithm>
#include <utility>

#include <gtest/gtest.h>

namespace allot {
namespace {

std::string header(const HttpResponse& response, const std::string& name) {
  auto it = std::ranges::find_if(response.headers, [&](const auto& h) { return h.first == name; });
  return it == response.headers.end() ? std::string() : it->second;
}

TEST(UrlOrigin, IsWhatABrowserNamesAsThePagesOrigin) {
  const std::pair<std::string, std::string> cases[] = {
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
      {"https://Allot-A.Example.com:8443/console/?x=1", "https://allot-a.example.com:8443"},
      // The scheme's own port is left out, as browsers do.
      {"http://allot.example:80/", "http://allot.example"},
      {"https://allot.example:443", "https://allot.example"},
      {"https://allot.example:80", "https://allot.example:80"},
      {"http://[::1]:8080/x", "http://[::1]:8080"},
      {"http://[::1]:80", "http://[::1]"},
      {"http://[::1]", "http://[::1]"},
      // Nothing a page comes from.
      {"", ""},
      {"allot.example:8080", ""},
      {"ftp://allot.example", ""},
      {"http://", ""},
      {"http://user@allot.example", ""},
  };
  for (const auto& [url, origin] : cases) EXPECT_EQ(url_origin(url), origin) << url;
}

TEST(Preflight, NamesWhatTheDashboardSendsOnlyToAnAllowedOrigin) {
  const HttpRequest asked{
      .method = "OPTIONS", .target = "/v1/instances", .origin = "http://a.example:8080"};
  const HttpResponse allowed = preflight_reply(asked, true);
  EXPECT_EQ(allowed.status, 204);
  EXPECT_EQ(header(allowed, "Access-Control-Allow-Origin"), "http://a.example:8080");
  EXPECT_NE(header(allowed, "Access-Control-Allow-Headers").find("Authorization"),
            std::string::npos);
  EXPECT_NE(header(allowed, "Access-Control-Allow-Headers").find("Idempotency-Key"),
            std::string::npos);
  // Never cookies: the links of published ports stay with their own origin.
  EXPECT_EQ(header(allowed, "Access-Control-Allow-Credentials"), "");

  const HttpResponse refused = preflight_reply(asked, false);
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("\"forbidden\""), std::string::npos);
  EXPECT_NE(refused.body.find("http://a.example:8080"), std::string::npos);
  EXPECT_EQ(header(refused, "Access-Control-Allow-Origin"), "");
}

}  // namespace
}  // namespace allot
