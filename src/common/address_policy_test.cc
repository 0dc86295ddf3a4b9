// Which addresses a tenant's webhook may reach, and the operator's allow-list.
#include "common/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

namespace allot {
namespace {

IpAddress ip(const std::string& text) {
  sockaddr_storage storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr), 1) << text;
    v6->sin6_family = AF_INET6;
  }
  IpAddress out;
  EXPECT_TRUE(ip_of(reinterpret_cast<const sockaddr*>(&storage), out));
  return out;
}

TEST(AddressPolicy, LoopbackLinkLocalPrivateAndReservedAddressesAreInternal) {
  for (const char* internal :
       {"127.0.0.1", "127.255.0.9", "0.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255",
        "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::1",
        "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
        // IPv6 forms that carry an internal IPv4 address.
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "2002:7f00:1::"}) {
    EXPECT_TRUE(is_internal(ip(internal))) << internal;
  }
  for (const char* public_address :
       {"8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "100.128.0.1", "2606:4700::1111",
        "::ffff:8.8.8.8", "64:ff9b::808:808"}) {
    EXPECT_FALSE(is_internal(ip(public_address))) << public_address;
  }
}

TEST(AddressPolicy, TheAllowListAdmitsOnlyItsRanges) {
  auto allow = AddressAllowList::parse("127.0.0.0/8, 10.1.0.0/16 ::1 fd00::/8");
  ASSERT_TRUE(allow) << allow.error().message;
  for (const char* admitted :
       {"127.0.0.1", "127.9.9.9", "10.1.200.3", "::1", "fd00::5", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(allow->admits(ip(admitted))) << admitted;
    EXPECT_TRUE(webhook_may_reach(ip(admitted), *allow)) << admitted;
  }
  for (const char* refused : {"10.2.0.1", "169.254.169.254", "::2", "fc00::1", "192.168.0.1"}) {
    EXPECT_FALSE(allow->admits(ip(refused))) << refused;
    EXPECT_FALSE(webhook_may_reach(ip(refused), *allow)) << refused;
  }
  EXPECT_TRUE(webhook_may_reach(ip("8.8.8.8"), AddressAllowList{}));
  EXPECT_TRUE(AddressAllowList::parse("")->empty());
  for (const char* bad : {"10.0.0.0/33", "::/129", "nope", "10.0.0.0/", "10.0.0.0/8x", "/8"}) {
    EXPECT_FALSE(AddressAllowList::parse(bad)) << bad;
  }
}

TEST(AddressPolicy, AWebhookUrlNamingAnInternalHostIsRefusedUnlessAllowed) {
  const AddressAllowList none;
  for (const char* url : {"http://127.0.0.1:9/hook", "http://localhost/hook", "http://[::1]:8/",
                          "https://169.254.169.254/latest/meta-data", "http://10.0.0.5/",
                          "http://[::ffff:127.0.0.1]/"}) {
    auto refused = check_webhook_host(url, none);
    ASSERT_FALSE(refused) << url;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(check_webhook_host("http://127.0.0.1:9/hook", *AddressAllowList::parse("127.0.0.1")));
  EXPECT_TRUE(check_webhook_host("https://8.8.8.8/hook", none));
  // A name that does not resolve now passes; each delivery resolves and checks it again.
  EXPECT_TRUE(check_webhook_host("https://no-such-host.invalid/hook", none));
}

}  // namespace
}  // namespace allot
