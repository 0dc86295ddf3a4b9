// Who may reach an instance's published port at /i/INSTANCE/PORT/ (docs/api.md, "Published
// ports"): the path's parts, and the signed links that let a browser in without a key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "common/seal.h"

namespace allot {

inline constexpr std::string_view kPortPathPrefix = "/i/";
// The query parameter a signed link carries, and the cookie that keeps it for the port's path.
inline constexpr std::string_view kLinkParameter = "allot_link";
inline constexpr std::string_view kLinkCookie = "allot_link";
// How long a signed link lets its holder in.
inline constexpr int64_t kLinkLifetimeMs = int64_t{60} * 60 * 1000;

struct PortPath {
  std::string instance_id;
  int port = 0;
  // What the instance is asked for: the rest of the path (at least "/") and the query, without
  // the link parameter.
  std::string target;
  std::string link;   // The link parameter's value, if any.
  bool bare = false;  // "/i/INSTANCE/PORT" without its slash: redirected to add it.
};

// Splits a raw request target under /i/. kNotFound when it names no instance and port;
// kInvalidArgument for a port outside 1..65535.
[[nodiscard]] Result<PortPath> parse_port_path(std::string_view target);

// "/i/INSTANCE/PORT"
std::string port_prefix(std::string_view instance_id, int port);

// A token that lets its holder reach `port` of `instance_id` until `expires_ms`, sealed with
// allotd's key (so that it can be neither forged nor moved to another port), URL-safe.
[[nodiscard]] Result<std::string> sign_port_link(const Sealer& sealer, std::string_view instance_id,
                                                 int port, TimeMs expires_ms);
// When the token lets its holder in: its expiry. kUnauthenticated when it is not a link to this
// port or has expired.
[[nodiscard]] Result<TimeMs> check_port_link(const Sealer& sealer, std::string_view token,
                                             std::string_view instance_id, int port, TimeMs now_ms);

// A browser shell's ticket (docs/api.md, "Exec and shell"): it stands for the key that asked for
// it, on one instance, for kTicketLifetimeMs, since a browser cannot send a key with a WebSocket.
inline constexpr int64_t kTicketLifetimeMs = 30'000;
[[nodiscard]] Result<std::string> sign_shell_ticket(const Sealer& sealer,
                                                    std::string_view instance_id,
                                                    std::string_view key_id, TimeMs expires_ms);
// The key id a ticket for `instance_id` stands for; kUnauthenticated when it is not one, or has
// expired.
[[nodiscard]] Result<std::string> check_shell_ticket(const Sealer& sealer, std::string_view token,
                                                     std::string_view instance_id, TimeMs now_ms);

// The "name=value" pairs of a Cookie header, in order, without the spaces around them.
std::vector<std::string_view> cookie_pairs(std::string_view cookie_header);

// The link cookie's value in a Cookie header; empty when there is none.
std::string link_cookie(std::string_view cookie_header);

}  // namespace allot
