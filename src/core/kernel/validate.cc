#include "core/kernel/validate.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/limits.h"
#include "common/random.h"

namespace allot {

Status check_name(std::string_view field, std::string_view name) {
  if (name.empty() || name.size() > limits::kMaxNameBytes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must be 1 to {} bytes", field, limits::kMaxNameBytes));
  }
  if (name.front() == ' ' || name.back() == ' ') {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must not start or end with a space", field));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must not hold control characters", field));
    }
  }
  return {};
}

bool is_plain_name(std::string_view name, size_t most) {
  if (name.empty() || name.size() > most) return false;
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  };
  const bool leads =
      (name.front() >= 'a' && name.front() <= 'z') || (name.front() >= '0' && name.front() <= '9');
  return leads && std::ranges::all_of(name, plain);
}

Status check_email(std::string_view email) {
  const size_t at = email.find('@');
  const bool well_formed = at != std::string_view::npos && at > 0 && at + 1 < email.size() &&
                           email.find('@', at + 1) == std::string_view::npos &&
                           email.find_first_of(" \t\r\n") == std::string_view::npos &&
                           email.size() <= limits::kMaxEmailBytes;
  if (!well_formed) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("'{}' is not an e-mail address", email));
  }
  return {};
}

Status check_id(std::string_view field, std::string_view id, std::string_view prefix) {
  if (!is_valid_id(id, prefix)) {
    return fail(ErrorCode::kInvalidId,
                fmt::format("{} must look like {}_0123456789abcdef", field, prefix));
  }
  return {};
}

Status check_idempotency_key(std::string_view what, std::string_view key) {
  const bool plain = std::ranges::all_of(key, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == ':';
  });
  if (key.empty() || key.size() > limits::kMaxIdempotencyKeyBytes || !plain) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is 1 to {} letters, digits, '-', '_', '.' or ':'", what,
                            limits::kMaxIdempotencyKeyBytes));
  }
  return {};
}

}  // namespace allot
