#include "common/error.h"

#include "common/enum_names.h"

namespace allot {

constexpr EnumNames<ErrorCode, 24> kCodeNames{
    {"invalid_argument",   "malformed_json", "unknown_field",   "missing_field",
     "invalid_type",       "invalid_id",     "body_too_large",  "unauthenticated",
     "forbidden",          "not_found",      "already_exists",  "conflict",
     "period_open",        "no_price",       "limit_exceeded",  "overflow",
     "insufficient_funds", "linked_failed",  "budget_exceeded", "method_not_allowed",
     "unavailable",        "bad_gateway",    "not_leader",      "internal"}};

std::string_view code_name(ErrorCode code) { return kCodeNames.name(code, "internal"); }

}  // namespace allot
