// Building JSON answers, and the one mapping from error codes to HTTP statuses.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http.h"
#include "common/error.h"

namespace allot {

int http_status(ErrorCode code);

// {"error": {"code": "...", "message": "..."}} with the code's status.
HttpResponse error_reply(const Error& error);

HttpResponse json_reply(int status, const nlohmann::json& body);

// The text json_reply sends for `body`.
std::string json_text(const nlohmann::json& body);

}  // namespace allot
