#include "api/reply.h"

namespace allot {

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformedJson:
    case ErrorCode::kUnknownField:
    case ErrorCode::kMissingField:
    case ErrorCode::kInvalidType:
    case ErrorCode::kInvalidId:
    case ErrorCode::kOverflow:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kForbidden:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kMethodNotAllowed:
      return 405;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
    case ErrorCode::kPeriodOpen:
    case ErrorCode::kNoPrice:
    case ErrorCode::kLinkedFailed:
      return 409;
    case ErrorCode::kBodyTooLarge:
      return 413;
    case ErrorCode::kLimitExceeded:
      return 422;
    case ErrorCode::kInsufficientFunds:
    case ErrorCode::kBudgetExceeded:
      return 402;
    case ErrorCode::kUnavailable:
    case ErrorCode::kNotLeader:
      return 503;
    case ErrorCode::kBadGateway:
      return 502;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

std::string json_text(const nlohmann::json& body) {
  // Log text and names may hold bytes that are not UTF-8: replace them rather than fail.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse json_reply(int status, const nlohmann::json& body) {
  return HttpResponse{status, json_text(body)};
}

HttpResponse error_reply(const Error& error) {
  return json_reply(http_status(error.code),
                    {{"error", {{"code", code_name(error.code)}, {"message", error.message}}}});
}

}  // namespace allot
