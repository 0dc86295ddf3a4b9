// One HTTP request over a fresh connection, with the whole answer: what tests of allotd's relays
// (published ports, services) check that the API client does not show, such as headers.
#pragma once

#include <map>
#include <string>
#include <vector>

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
// Cookie header when not empty, and `headers` besides.
RawAnswer raw_request(const std::string& url, const std::string& method, const std::string& target,
                      const std::string& key, const std::string& body = "",
                      const std::string& cookie = "",
                      const std::map<std::string, std::string>& headers = {});

// Sends `bytes` as they are to `url` over a fresh connection and returns all that comes back
// until the server closes it (or `wait_ms` pass): for requests no client would make.
std::string raw_send(const std::string& url, const std::string& bytes, int wait_ms = 10'000);
// The same, the pieces sent one by one with `pause_ms` between them, as a slow client sends.
std::string raw_send_pieces(const std::string& url, const std::vector<std::string>& pieces,
                            int pause_ms, int wait_ms = 10'000);

// The status of a raw answer's first line (0: none, as when the connection closed unanswered).
int status_of(const std::string& answer);

// The "code" of an error answer's body ({"error": {"code", ...}}); empty for any other body.
std::string error_code_of(const std::string& body);

// A free TCP port on loopback (free now; something binds it a moment later).
int free_loopback_port();

}  // namespace allot::testing
