#include "daemon/webhook.h"

#include <gtest/gtest.h>

#include "daemon/webhook_post.h"
#include "support/webhook_receiver.h"

namespace allot {
namespace {

TEST(Webhook, TheSignatureIsHmacSha256OfTimestampDotBody) {
  // Computed apart from this code (Python's hmac module) for the documented scheme.
  EXPECT_EQ(webhook_signature("whsec_test", 1'700'000'000, R"({"a":1})"),
            "sha256=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
  EXPECT_NE(webhook_signature("whsec_test", 1'700'000'001, R"({"a":1})"),
            webhook_signature("whsec_test", 1'700'000'000, R"({"a":1})"));
}

TEST(Webhook, RetriesWaitTwiceAsLongEachTimeUpToTheCap) {
  const WebhookOptions options{.retry_base_ms = 1'000, .retry_max_ms = 5'000};
  EXPECT_EQ(retry_delay_ms(options, 1), 1'000);
  EXPECT_EQ(retry_delay_ms(options, 2), 2'000);
  EXPECT_EQ(retry_delay_ms(options, 3), 4'000);
  EXPECT_EQ(retry_delay_ms(options, 4), 5'000);
  EXPECT_EQ(retry_delay_ms(options, 1'000'000), 5'000);  // No overflow on long runs.
}

TEST(Webhook, UrlsSplitIntoHostPortAndPath) {
  auto plain = parse_webhook_url("http://127.0.0.1:8080/hooks/a?x=1");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, "8080");
  EXPECT_EQ(plain->path, "/hooks/a?x=1");
  auto tls = parse_webhook_url("https://hooks.example.com");
  ASSERT_TRUE(tls);
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, "443");
  EXPECT_EQ(tls->path, "/");
  auto v6 = parse_webhook_url("http://[::1]/h");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "[::1]");
  EXPECT_EQ(v6->port, "80");
  EXPECT_FALSE(parse_webhook_url("ftp://x/"));
  EXPECT_FALSE(parse_webhook_url("http:///x"));
}

// The test receivers listen on loopback, which a webhook reaches only when the operator allows it.
const AddressAllowList kLoopback = *AddressAllowList::parse("127.0.0.0/8, ::1");

TEST(Webhook, APostSendsItsHeadersAndBodyAndReadsTheStatus) {
  testing::WebhookReceiver receiver;
  receiver.script({418});
  auto target = parse_webhook_url(receiver.url("/in?x=1"));
  ASSERT_TRUE(target);
  auto status = post(*target, R"({"a":1})", {{"X-Allot-Event", "test"}}, kLoopback, 5'000);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(*status, 418);
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/in?x=1");
  EXPECT_EQ(requests[0].headers.at("x-allot-event"), "test");
  EXPECT_EQ(requests[0].body, R"({"a":1})");
}

TEST(Webhook, TlsToAServerThatSpeaksNoTlsFailsWithinTheDeadline) {
  testing::WebhookReceiver receiver;
  auto target = parse_webhook_url(receiver.url("/"));
  ASSERT_TRUE(target);
  target->tls = true;
  auto status = post(*target, "{}", {}, kLoopback, 1'000);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(receiver.requests().empty());
  // Nobody listens on port 9 of loopback: refused at once.
  EXPECT_FALSE(post(*parse_webhook_url("http://127.0.0.1:9/"), "{}", {}, kLoopback, 1'000));
}

TEST(Webhook, APostToAnInternalAddressIsRefusedUnlessAllowedAndNothingIsSent) {
  testing::WebhookReceiver receiver;
  // By address and by a name that resolves to loopback: no connection is made.
  const std::string port = parse_webhook_url(receiver.url("/"))->port;
  for (const std::string& url : {receiver.url("/in"), "http://localhost:" + port + "/in"}) {
    auto status = post(*parse_webhook_url(url), "{}", {}, AddressAllowList{}, 1'000);
    ASSERT_FALSE(status) << url;
    EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(status.error().message.find("webhook_allow"), std::string::npos)
        << status.error().message;
    // An allow-list that admits other ranges only does not help.
    EXPECT_FALSE(
        post(*parse_webhook_url(url), "{}", {}, *AddressAllowList::parse("10.0.0.0/8"), 1'000));
  }
  EXPECT_TRUE(receiver.requests().empty());
}

}  // namespace
}  // namespace allot
