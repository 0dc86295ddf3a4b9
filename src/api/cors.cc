#include "api/cors.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/reply.h"

namespace allot {

std::string url_origin(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  std::string origin(url.substr(0, url.find_first_of("/?#", scheme_end + 3)));
  std::ranges::transform(origin, origin.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string_view scheme = std::string_view(origin).substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return {};
  const size_t host_at = scheme_end + 3;
  if (host_at == origin.size() || origin.find('@', host_at) != std::string::npos) return {};
  // The port follows the last colon, or the bracket that closes an IPv6 address.
  const size_t bracket = origin.rfind(']');
  const size_t colon = origin.rfind(':');
  const bool has_port = colon > host_at && (bracket == std::string::npos || colon > bracket);
  if (has_port && origin.substr(colon + 1) == (scheme == "http" ? "80" : "443")) {
    origin.resize(colon);
  }
  return origin;
}

HttpResponse preflight_reply(const HttpRequest& request, bool allowed) {
  if (!allowed) {
    return error_reply(Error{
        ErrorCode::kForbidden,
        fmt::format("pages from {} may not call this allotd: only the origins of its replicas' "
                    "--advertise-url may",
                    request.origin)});
  }
  HttpResponse answer{.status = 204, .body = {}, .content_type = "text/plain"};
  allow_origin(answer, request.origin);
  answer.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE");
  answer.headers.emplace_back("Access-Control-Allow-Headers",
                              "Authorization, Content-Type, Idempotency-Key");
  answer.headers.emplace_back("Access-Control-Max-Age", "600");
  return answer;
}

void allow_origin(HttpResponse& response, const std::string& origin) {
  response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  response.headers.emplace_back("Access-Control-Expose-Headers", "Idempotent-Replayed, Location");
  response.headers.emplace_back("Vary", "Origin");
}

}  // namespace allot
