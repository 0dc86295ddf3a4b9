// Which network addresses a tenant's webhook may reach. A tenant chooses its webhook URL, and the
// controller connects to it from inside the operator's network: left open, a URL naming
// 127.0.0.1, 169.254.169.254 or 10.0.0.5 would let a tenant make the controller POST to services
// that only trust their neighbours. So loopback, link-local, private and other non-public
// addresses are refused unless the operator's allow-list (CIDR ranges) admits them.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace allot {

// An IPv4 or IPv6 address; IPv4 is kept as its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so that
// one comparison serves both families.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};

  bool operator==(const IpAddress&) const = default;
  bool is_v4() const;
  std::string to_string() const;
};

// The address of a socket address of family AF_INET or AF_INET6; false for others.
bool ip_of(const sockaddr* address, IpAddress& out);

// Whether a webhook may not reach the address without the operator's leave: unspecified,
// loopback, link-local, private (RFC 1918, unique local fc00::/7), shared (100.64.0.0/10),
// multicast, broadcast and reserved ranges, and IPv6 forms that embed an IPv4 address of those.
bool is_internal(const IpAddress& address);

// The operator's allow-list: CIDR ranges a webhook may reach even though they are internal.
class AddressAllowList {
 public:
  // "127.0.0.0/8, ::1/128, 10.1.2.3": ranges separated by commas or spaces, a bare address being
  // a range of one; empty: none. kInvalidArgument names the first that does not parse.
  [[nodiscard]] static Result<AddressAllowList> parse(std::string_view text);

  bool admits(const IpAddress& address) const;
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    IpAddress base;
    int prefix_bits = 128;  // Of the IPv6 (or mapped IPv4) form.
  };
  std::vector<Range> ranges_;
};

// Whether a webhook may connect to `address`: it is public, or the allow-list admits it.
inline bool webhook_may_reach(const IpAddress& address, const AddressAllowList& allow) {
  return !is_internal(address) || allow.admits(address);
}

// A webhook host's addresses as the resolver gives them now, with the port; kUnavailable when it
// does not resolve.
struct ResolvedAddress {
  IpAddress ip;
  sockaddr_storage address{};
  socklen_t length = 0;
};
[[nodiscard]] Result<std::vector<ResolvedAddress>> resolve_host(const std::string& host,
                                                                const std::string& port);

// A webhook delivery target split from its URL.
struct WebhookTarget {
  bool tls = false;
  std::string host;  // As in the URL: an IPv6 address keeps its brackets.
  std::string port;
  std::string path;  // With the query, "/" at least.

  // The host as the resolver takes it: without an IPv6 address's brackets.
  std::string bare_host() const;
};
[[nodiscard]] Result<WebhookTarget> parse_webhook_url(std::string_view url);

// The webhook URL refused (kInvalidArgument) if its host names, or resolves to, any address a
// webhook may not reach. A host that does not resolve now passes: each delivery checks again.
[[nodiscard]] Status check_webhook_host(std::string_view url, const AddressAllowList& allow);

}  // namespace allot
