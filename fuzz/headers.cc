// The headers allotd reads credentials from, over any bytes: the bytes as a Cookie header (its
// pairs, and the signed link a published port's cookie carries, api/port_access.h), as an
// Authorization header (bearer_token and authenticate_key, api/auth.h, over lookups that know one
// key), and as a published port's path under /i/ (whose query may carry the link instead).
// Properties: nothing crashes or throws; cookie pairs are trimmed and hold no ';'; a bearer token
// is the header's text after "Bearer " within the key limits; only the known key authenticates;
// no token made of these bytes opens as a link or a ticket, since they are sealed with a key that
// no seed was sealed with.
#include <array>
#include <cstdint>
#include <string>

#include "api/auth.h"
#include "api/port_access.h"
#include "check.h"
#include "common/limits.h"
#include "common/random.h"
#include "common/seal.h"

namespace allot {
namespace {

using fuzz::require;

constexpr std::string_view kKnownKey = "allot_fuzzknownkey0123456789abcdef";
constexpr TimeMs kNowMs = 1'800'000'000'000;

// Finds keys by hash and users by id, as State does (api/auth.h): it knows one.
struct OneKey {
  ApiKey key_{.id = "key_1", .user_id = "usr_1", .token_hash = sha256_hex(kKnownKey)};
  User user_{.id = "usr_1", .tenant_id = "ten_1"};

  const ApiKey* key_for_hash(const std::string& hash) const {
    return hash == key_.token_hash ? &key_ : nullptr;
  }
  const User* user(const std::string& id) const { return id == user_.id ? &user_ : nullptr; }
};

void check_cookie(std::string_view header, const Sealer& sealer) {
  for (const std::string_view pair : cookie_pairs(header)) {
    require(!pair.empty() && !pair.starts_with(' ') && !pair.ends_with(' '), "a pair is trimmed");
    require(pair.find(';') == std::string_view::npos, "a pair holds no ';'");
  }
  const std::string link = link_cookie(header);
  require(link.empty() || header.find(link) != std::string_view::npos, "the link is the cookie's");
  require(!check_port_link(sealer, link, "ins_1", 8080, kNowMs), "no forged link opens");
  require(!check_shell_ticket(sealer, link, "ins_1", kNowMs), "no forged ticket opens");
}

void check_authorization(std::string_view header) {
  if (auto token = bearer_token(header)) {
    require(header.starts_with("Bearer ") && *token == header.substr(7),
            "the token follows Bearer");
    require(token->size() >= limits::kMinKeyBytes && token->size() <= limits::kMaxKeyBytes,
            "a token is within the key limits");
  }
  auto caller = authenticate_key(OneKey{}, header);
  require(caller.has_value() == (header == std::string("Bearer ") + std::string(kKnownKey)),
          "only the known key authenticates");
}

void check_port_path(std::string_view bytes, const Sealer& sealer) {
  auto path = parse_port_path(std::string(kPortPathPrefix) + std::string(bytes));
  if (!path) return;
  require(path->port >= 1 && path->port <= 65535, "a port is 1 to 65535");
  require(path->target.starts_with('/'), "a port's target is a path");
  require(!check_port_link(sealer, path->link, path->instance_id, path->port, kNowMs),
          "no forged link opens");
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  static const Sealer sealer(std::array<unsigned char, Sealer::kKeyBytes>{1, 2, 3});
  const std::string_view bytes = fuzz::bytes_of(data, size);
  check_cookie(bytes, sealer);
  check_authorization(bytes);
  check_port_path(bytes, sealer);
  return 0;
}
