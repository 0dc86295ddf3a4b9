// Cross-origin access between the replicas of one database (docs/ha.md): a dashboard loaded from
// one replica calls the leader at another's URL. Only pages from a replica's own advertised
// origin are let in, and never with cookies: the API's keys travel in the Authorization header,
// which only a page of the origin that stored the key can send.
#pragma once

#include <string>
#include <string_view>

#include "api/http.h"

namespace allot {

// The origin a browser names for a page under `url`: "scheme://host[:port]", lowercased, without
// the scheme's default port or any path. Empty when `url` is not an http(s) URL.
std::string url_origin(std::string_view url);

// The answer to a preflight (OPTIONS with an Origin): 204 with what the page may send when its
// origin is `allowed`, 403 forbidden otherwise.
HttpResponse preflight_reply(const HttpRequest& request, bool allowed);

// Lets a page of `origin` read `response` and the header fields the dashboard looks at.
void allow_origin(HttpResponse& response, const std::string& origin);

}  // namespace allot
