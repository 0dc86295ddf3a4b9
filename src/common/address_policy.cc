#include "common/address_policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

namespace allot {
namespace {

// ::ffff:0:0/96, the prefix of an IPv4 address in IPv6 form.
constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

IpAddress from_v4(const uint8_t* four) {
  IpAddress out;
  std::memcpy(out.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size());
  std::memcpy(out.bytes.data() + 12, four, 4);
  return out;
}

// Whether the first `bits` bits of `a` and `b` agree.
bool same_prefix(const IpAddress& a, const IpAddress& b, int bits) {
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const auto mask = static_cast<uint8_t>(bits >= 8 ? 0xff : 0xff << (8 - bits));
    if ((a.bytes[i] & mask) != (b.bytes[i] & mask)) return false;
  }
  return true;
}

// An address in text, IPv4 or IPv6, or nullopt.
std::optional<IpAddress> parse_ip(const std::string& text) {
  std::array<uint8_t, 16> raw{};
  if (inet_pton(AF_INET, text.c_str(), raw.data()) == 1) return from_v4(raw.data());
  if (inet_pton(AF_INET6, text.c_str(), raw.data()) == 1) return IpAddress{raw};
  return std::nullopt;
}

struct InternalRange {
  const char* base;
  int prefix_bits;  // Of the IPv6 form (an IPv4 /8 is /104).
};

// Ranges no tenant's webhook reaches unless allowed (IANA special-purpose registries).
constexpr std::array<InternalRange, 19> kInternal = {{
    {"::ffff:0.0.0.0", 104},      // 0.0.0.0/8 "this network"
    {"::ffff:10.0.0.0", 104},     // 10.0.0.0/8 private
    {"::ffff:100.64.0.0", 106},   // 100.64.0.0/10 shared (carrier-grade NAT)
    {"::ffff:127.0.0.0", 104},    // 127.0.0.0/8 loopback
    {"::ffff:169.254.0.0", 112},  // 169.254.0.0/16 link-local (cloud metadata lives here)
    {"::ffff:172.16.0.0", 108},   // 172.16.0.0/12 private
    {"::ffff:192.0.0.0", 120},    // 192.0.0.0/24 protocol assignments
    {"::ffff:192.168.0.0", 112},  // 192.168.0.0/16 private
    {"::ffff:198.18.0.0", 111},   // 198.18.0.0/15 benchmarking
    {"::ffff:224.0.0.0", 100},    // 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, broadcast
    {"::ffff:240.0.0.0", 100},
    {"::", 128},          // unspecified
    {"::1", 128},         // loopback
    {"64:ff9b:1::", 48},  // local-use IPv4/IPv6 translation
    {"100::", 64},        // discard-only
    {"fc00::", 7},        // unique local
    {"fe80::", 10},       // link-local
    {"fec0::", 10},       // site-local (deprecated, still routed inside some networks)
    {"ff00::", 8},        // multicast
}};

// The IPv4 address an IPv6 one carries, if it is of a form that does: NAT64 (64:ff9b::/96),
// IPv4-compatible (::/96) and 6to4 (2002::/16).
std::optional<IpAddress> embedded_v4(const IpAddress& a) {
  static const IpAddress nat64 = *parse_ip("64:ff9b::");
  static const IpAddress compatible = *parse_ip("::");
  if (same_prefix(a, nat64, 96) || same_prefix(a, compatible, 96)) {
    return from_v4(a.bytes.data() + 12);
  }
  if (a.bytes[0] == 0x20 && a.bytes[1] == 0x02) return from_v4(a.bytes.data() + 2);
  return std::nullopt;
}

bool in_internal_range(const IpAddress& a) {
  for (const InternalRange& r : kInternal) {
    if (same_prefix(a, *parse_ip(r.base), r.prefix_bits)) return true;
  }
  return false;
}

}  // namespace

bool IpAddress::is_v4() const {
  return std::memcmp(bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0;
}

std::string IpAddress::to_string() const {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (is_v4()) {
    inet_ntop(AF_INET, bytes.data() + 12, text.data(), text.size());
  } else {
    inet_ntop(AF_INET6, bytes.data(), text.data(), text.size());
  }
  return text.data();
}

bool ip_of(const sockaddr* address, IpAddress& out) {
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    out = from_v4(reinterpret_cast<const uint8_t*>(&v4->sin_addr));
    return true;
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    std::memcpy(out.bytes.data(), &v6->sin6_addr, 16);
    return true;
  }
  return false;
}

bool is_internal(const IpAddress& address) {
  if (in_internal_range(address)) return true;
  const auto inner = embedded_v4(address);
  return inner && in_internal_range(*inner);
}

Result<AddressAllowList> AddressAllowList::parse(std::string_view text) {
  AddressAllowList out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find_first_of(", ", at);
    const std::string_view item = text.substr(at, end == std::string_view::npos ? end : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    if (item.empty()) continue;
    const size_t slash = item.find('/');
    const auto base = parse_ip(std::string(item.substr(0, slash)));
    int bits = 0;
    const std::string_view prefix =
        slash == std::string_view::npos ? std::string_view() : item.substr(slash + 1);
    const bool bits_ok =
        prefix.empty() ? slash == std::string_view::npos
                       : std::from_chars(prefix.data(), prefix.data() + prefix.size(), bits).ptr ==
                             prefix.data() + prefix.size();
    const int most = base && base->is_v4() ? 32 : 128;
    if (!base || !bits_ok || bits < 0 || bits > most) {
      return fail(
          ErrorCode::kInvalidArgument,
          fmt::format("'{}' is not an address or CIDR range (e.g. 10.0.0.0/8, ::1/128)", item));
    }
    const int prefix_bits = prefix.empty() ? 128 : (most == 32 ? 96 + bits : bits);
    out.ranges_.push_back(Range{.base = *base, .prefix_bits = prefix_bits});
  }
  return out;
}

bool AddressAllowList::admits(const IpAddress& address) const {
  for (const Range& r : ranges_) {
    if (same_prefix(address, r.base, r.prefix_bits)) return true;
  }
  return false;
}

Result<std::vector<ResolvedAddress>> resolve_host(const std::string& host,
                                                  const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot resolve {}: {}", host, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  std::vector<ResolvedAddress> out;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    ResolvedAddress r;
    if (a->ai_addrlen > sizeof r.address || !ip_of(a->ai_addr, r.ip)) continue;
    std::memcpy(&r.address, a->ai_addr, a->ai_addrlen);
    r.length = a->ai_addrlen;
    out.push_back(r);
  }
  return out;
}

std::string WebhookTarget::bare_host() const {
  if (host.starts_with('[') && host.ends_with(']')) return host.substr(1, host.size() - 2);
  return host;
}

Result<WebhookTarget> parse_webhook_url(std::string_view url) {
  WebhookTarget target;
  if (url.starts_with("https://")) {
    target.tls = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return fail(ErrorCode::kInvalidArgument, "the webhook URL must be http:// or https://");
  }
  const size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  target.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  const size_t colon = authority.rfind(':');
  const bool bracketed = authority.starts_with('[');  // IPv6: the port follows the ']'.
  if (colon != std::string_view::npos && (!bracketed || colon > authority.find(']'))) {
    target.port = std::string(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
  } else {
    target.port = target.tls ? "443" : "80";
  }
  target.host = std::string(authority);
  if (target.host.empty() || target.port.empty()) {
    return fail(ErrorCode::kInvalidArgument, "the webhook URL needs a host");
  }
  return target;
}

Status check_webhook_host(std::string_view url, const AddressAllowList& allow) {
  auto target = parse_webhook_url(url);
  if (!target) return std::unexpected(target.error());
  auto addresses = resolve_host(target->bare_host(), target->port);
  if (!addresses) return {};  // Not resolvable now; every delivery resolves and checks again.
  for (const ResolvedAddress& a : *addresses) {
    if (!webhook_may_reach(a.ip, allow)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("the webhook host {} is at {}, an internal address a webhook may "
                              "not reach unless the operator allows it (webhook_allow)",
                              target->host, a.ip.to_string()));
    }
  }
  return {};
}

}  // namespace allot
