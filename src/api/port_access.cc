#include "api/port_access.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace allot {

namespace {

constexpr std::string_view kLinkContext = "port-link";
constexpr std::string_view kTicketContext = "shell-ticket";

// The query without the link parameter, and that parameter's value.
std::pair<std::string, std::string> split_link(std::string_view query) {
  std::string kept;
  std::string link;
  const std::string key = std::string(kLinkParameter) + "=";
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (pair.starts_with(key)) {
      link = pair.substr(key.size());
    } else if (!pair.empty()) {
      if (!kept.empty()) kept += '&';
      kept += pair;
    }
    start = end + 1;
  }
  return {kept, link};
}

// base64 and its URL-safe form (RFC 4648 section 5, no padding), both ways.
std::string url_safe(std::string text) {
  std::ranges::replace(text, '+', '-');
  std::ranges::replace(text, '/', '_');
  while (text.ends_with('=')) text.pop_back();
  return text;
}

std::string from_url_safe(std::string_view token) {
  std::string text(token);
  std::ranges::replace(text, '-', '+');
  std::ranges::replace(text, '_', '/');
  while (text.size() % 4 != 0) text += '=';
  return text;
}

}  // namespace

std::string port_prefix(std::string_view instance_id, int port) {
  return fmt::format("{}{}/{}", kPortPathPrefix, instance_id, port);
}

Result<PortPath> parse_port_path(std::string_view target) {
  if (!target.starts_with(kPortPathPrefix)) return fail(ErrorCode::kNotFound, "not a port path");
  const size_t query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query =
      query_at == std::string_view::npos ? std::string_view{} : target.substr(query_at + 1);
  std::string_view rest = path.substr(kPortPathPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0) {
    return fail(ErrorCode::kNotFound, "a published port's path is /i/INSTANCE/PORT/");
  }
  PortPath out;
  out.instance_id = std::string(rest.substr(0, slash));
  rest.remove_prefix(slash + 1);
  const size_t port_end = std::min(rest.find('/'), rest.size());
  const std::string_view digits = rest.substr(0, port_end);
  int64_t port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not a port (1 to 65535)", digits.substr(0, 16)));
  }
  if (port < 1 || port > 65535) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("{} is not a port (1 to 65535)", port));
  }
  out.port = static_cast<int>(port);
  rest.remove_prefix(port_end);
  out.bare = rest.empty();
  auto [kept, link] = split_link(query);
  out.link = std::move(link);
  out.target = rest.empty() ? "/" : std::string(rest);
  if (!kept.empty()) out.target += "?" + kept;
  return out;
}

namespace {

// A sealed "SUBJECT|EXPIRES_MS", URL-safe.
Result<std::string> sign_grant(const Sealer& sealer, std::string_view context,
                               std::string_view subject, TimeMs expires_ms) {
  auto sealed = sealer.seal(fmt::format("{}|{}", subject, expires_ms), context);
  if (!sealed) return std::unexpected(sealed.error());
  return url_safe(*std::move(sealed));
}

// The subject of a grant sealed for `context` that has not expired; kUnauthenticated otherwise.
Result<std::string> check_grant(const Sealer& sealer, std::string_view context,
                                std::string_view token, TimeMs now_ms, TimeMs& expires_ms) {
  const auto refused = [] {
    return fail(ErrorCode::kUnauthenticated, "the link or ticket is not valid here, or expired");
  };
  if (token.empty() || token.size() > 512) return refused();
  auto opened = sealer.open(from_url_safe(token), context);
  if (!opened) return refused();
  const size_t bar = opened->rfind('|');
  if (bar == std::string::npos) return refused();
  const std::string_view rest = std::string_view(*opened).substr(bar + 1);
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), expires_ms);
  if (ec != std::errc{} || end != rest.data() + rest.size() || expires_ms <= now_ms) {
    return refused();
  }
  return opened->substr(0, bar);
}

}  // namespace

Result<std::string> sign_port_link(const Sealer& sealer, std::string_view instance_id, int port,
                                   TimeMs expires_ms) {
  return sign_grant(sealer, kLinkContext, fmt::format("{}|{}", instance_id, port), expires_ms);
}

Result<TimeMs> check_port_link(const Sealer& sealer, std::string_view token,
                               std::string_view instance_id, int port, TimeMs now_ms) {
  TimeMs expires_ms = 0;
  auto subject = check_grant(sealer, kLinkContext, token, now_ms, expires_ms);
  if (!subject) return std::unexpected(subject.error());
  if (*subject != fmt::format("{}|{}", instance_id, port)) {
    return fail(ErrorCode::kUnauthenticated, "the link is not valid for this port");
  }
  return expires_ms;
}

Result<std::string> sign_shell_ticket(const Sealer& sealer, std::string_view instance_id,
                                      std::string_view key_id, TimeMs expires_ms) {
  return sign_grant(sealer, kTicketContext, fmt::format("{}|{}", instance_id, key_id), expires_ms);
}

Result<std::string> check_shell_ticket(const Sealer& sealer, std::string_view token,
                                       std::string_view instance_id, TimeMs now_ms) {
  TimeMs expires_ms = 0;
  auto subject = check_grant(sealer, kTicketContext, token, now_ms, expires_ms);
  if (!subject) return std::unexpected(subject.error());
  const std::string prefix = std::string(instance_id) + "|";
  if (!subject->starts_with(prefix)) {
    return fail(ErrorCode::kUnauthenticated, "the ticket is for another instance");
  }
  return subject->substr(prefix.size());
}

std::vector<std::string_view> cookie_pairs(std::string_view cookie_header) {
  std::vector<std::string_view> pairs;
  size_t start = 0;
  while (start < cookie_header.size()) {
    size_t end = cookie_header.find(';', start);
    if (end == std::string_view::npos) end = cookie_header.size();
    std::string_view pair = cookie_header.substr(start, end - start);
    while (pair.starts_with(' ')) pair.remove_prefix(1);
    while (pair.ends_with(' ')) pair.remove_suffix(1);
    if (!pair.empty()) pairs.push_back(pair);
    start = end + 1;
  }
  return pairs;
}

std::string link_cookie(std::string_view cookie_header) {
  const std::string key = std::string(kLinkCookie) + "=";
  for (std::string_view pair : cookie_pairs(cookie_header)) {
    if (pair.starts_with(key)) return std::string(pair.substr(key.size()));
  }
  return "";
}

}  // namespace allot
