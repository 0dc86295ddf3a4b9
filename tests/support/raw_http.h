// One HTTP request over a fresh connection, with the whole answer: what tests of allotd's relays
// (published ports, services) check that the API client does not show, such as headers.
#pragma once

#include <map>
#include <string>

namespace allot::testing {

struct RawAnswer {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // By lowercase name; the last of each.

  std::string header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// `method` `target` to `url` (http://HOST:PORT), with `key` as a Bearer token and `cookie` as the
// Cookie header when not empty.
RawAnswer raw_request(const std::string& url, const std::string& method, const std::string& target,
                      const std::string& key, const std::string& body = "",
                      const std::string& cookie = "");

// The "code" of an error answer's body ({"error": {"code", ...}}); empty for any other body.
std::string error_code_of(const std::string& body);

// A free TCP port on loopback (free now; something binds it a moment later).
int free_loopback_port();

}  // namespace allot::testing
