#include "common/error.h"

namespace allot {

std::string_view code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kMalformedJson:
      return "malformed_json";
    case ErrorCode::kUnknownField:
      return "unknown_field";
    case ErrorCode::kMissingField:
      return "missing_field";
    case ErrorCode::kInvalidType:
      return "invalid_type";
    case ErrorCode::kInvalidId:
      return "invalid_id";
    case ErrorCode::kBodyTooLarge:
      return "body_too_large";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kForbidden:
      return "forbidden";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kPeriodOpen:
      return "period_open";
    case ErrorCode::kNoPrice:
      return "no_price";
    case ErrorCode::kLimitExceeded:
      return "limit_exceeded";
    case ErrorCode::kOverflow:
      return "overflow";
    case ErrorCode::kInsufficientFunds:
      return "insufficient_funds";
    case ErrorCode::kLinkedFailed:
      return "linked_failed";
    case ErrorCode::kBudgetExceeded:
      return "budget_exceeded";
    case ErrorCode::kMethodNotAllowed:
      return "method_not_allowed";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace allot
