// Errors as values. Every expected rejection carries a stable code that clients can rely on; the
// message is for people and may change.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace allot {

enum class ErrorCode {
  kInvalidArgument,    // A field has a bad value.
  kMalformedJson,      // The body is not JSON, or not a JSON object.
  kUnknownField,       // The body names a field the endpoint does not take.
  kMissingField,       // A required field is absent.
  kInvalidType,        // A field has the wrong JSON type.
  kInvalidId,          // An id is not of the form the path or field expects.
  kBodyTooLarge,       // The body is over limits::kMaxBodyBytes.
  kUnauthenticated,    // No key, or a key that is unknown, revoked or of a disabled user.
  kForbidden,          // The caller's role does not allow this.
  kNotFound,           // No such object, or one the caller may not see.
  kAlreadyExists,      // A unique name or id is taken.
  kConflict,           // The object's state does not allow this change.
  kPeriodOpen,         // The billing period has not ended (finalize it early on purpose only).
  kNoPrice,            // No price covers the work where it may run: it would go uncharged.
  kLimitExceeded,      // A limit from limits.h would be passed.
  kOverflow,           // An amount would leave the int64 range.
  kInsufficientFunds,  // A transfer would take an account past its balance limit.
  kLinkedFailed,       // A linked transfer that was fine: another of its chain failed (ledger).
  kBudgetExceeded,     // The month's spend has reached a budget that blocks new work.
  kMethodNotAllowed,   // The path exists but not with this method.
  kUnavailable,        // The store failed; nothing was changed. Retry later.
  kBadGateway,         // An instance's port did not answer through its node's tunnel.
  kNotLeader,          // This replica does not lead (high availability); nothing was changed.
  kInternal,           // A bug.
};

// The stable wire name of a code, e.g. "not_found".
std::string_view code_name(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;

  bool operator==(const Error&) const = default;
};

template <typename T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

}  // namespace allot
