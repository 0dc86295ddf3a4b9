// allotd's reading of a request off a connection (api/http_parse.h), over any bytes, and what the
// router then makes of its target and headers. Properties: nothing crashes or throws; a refusal is
// a 4xx or 5xx whose JSON body carries its code; a request that is let through has the header
// check_header asks for; and how TCP splits the bytes changes no request let through: the bytes
// are read whole and again in reads of 1 to 64 bytes (chosen by the last byte), see check_same.
#include <variant>

#include <nlohmann/json.hpp>

#include "api/auth.h"
#include "api/http_parse.h"
#include "api/port_access.h"
#include "api/request.h"
#include "check.h"
#include "common/limits.h"

namespace allot {
namespace {

namespace http = boost::beast::http;
using fuzz::require;

void check_refusal(const Refusal& refusal) {
  require(refusal.status >= 400 && refusal.status <= 599, "a refusal is a 4xx or a 5xx");
  require(!refusal.code.empty(), "a refusal has a code");
  const HttpResponse response = refusal.response();
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  require(body.is_object() && body.contains("error") && body["error"].is_object(),
          "a refusal's body is {\"error\": {...}}");
  require(body["error"].value("code", "") == refusal.code, "a refusal's body carries its code");
}

// What allotd serves: HTTP/1.x, a bounded target and body, a Host header in HTTP/1.1, and not both
// framings of a body.
void check_request(const RequestMessage& message) {
  require(message.version() == 10 || message.version() == 11, "a request is HTTP/1.0 or 1.1");
  require(message.target().size() <= limits::kMaxTargetBytes, "a target is within its limit");
  require(message.body().size() <= limits::kMaxBodyBytes, "a body is within its limit");
  require(message.version() == 10 || message.count(http::field::host) > 0, "HTTP/1.1 has Host");
  require(message.count(http::field::content_length) == 0 ||
              message.count(http::field::transfer_encoding) == 0,
          "not both Content-Length and Transfer-Encoding");
}

// As the server and the router read a request that is let through: its target split into a path
// and a query (and, under /i/, a published port's parts), its key and its link cookie.
void route(const RequestMessage& message) {
  const std::string_view target(message.target().data(), message.target().size());
  if (auto parsed = parse_target(target)) {
    (void)read_page(*parsed, {"state"});
  }
  if (target.starts_with(kPortPathPrefix)) {
    (void)parse_port_path(target);
  }
  const auto text = [&message](http::field field) {
    const auto value = message[field];
    return std::string_view(value.data(), value.size());
  };
  (void)bearer_token(text(http::field::authorization));
  (void)link_cookie(text(http::field::cookie));
  (void)message.keep_alive();
}

bool too_large(const ReadOutcome& outcome) {
  const auto* refusal = std::get_if<Refusal>(&outcome);
  return refusal != nullptr && refusal->status == 431;
}

// A request is let through whole or in pieces alike, and is then the same request. How it is
// refused may differ: Beast reads a request line, and fields, as soon as they are whole in the
// first read, and otherwise only once the header's end has come, so that bytes without a whole
// header may be refused for their first line when read at once and for the header's size, or not
// at all, in pieces; and a version in the header's last 8 bytes waits for more bytes in pieces
// (the server answers 408 when they do not come) where a whole read refuses it. And Beast holds a
// header to kMaxHeaderBytes exactly only when it comes in pieces: in one read, fields a little
// past it may pass (the connection's buffer bounds them still).
void check_same(std::string_view bytes, const ReadOutcome& whole, const ReadOutcome& pieces) {
  const size_t end = bytes.find("\r\n\r\n");
  const bool over_limit = end == std::string_view::npos || end + 4 > limits::kMaxHeaderBytes;
  if (over_limit && (too_large(whole) || too_large(pieces))) return;
  const auto* message = std::get_if<RequestMessage>(&whole);
  const auto* other = std::get_if<RequestMessage>(&pieces);
  require((message == nullptr) == (other == nullptr), "reads in pieces let through what one does");
  if (message == nullptr) return;
  require(message->method_string() == other->method_string() &&
              message->target() == other->target() && message->body() == other->body() &&
              message->version() == other->version(),
          "reads in pieces make the request one read makes");
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  const std::string_view bytes = fuzz::bytes_of(data, size);
  const ReadOutcome whole = parse_request(bytes);
  if (const auto* refusal = std::get_if<Refusal>(&whole)) check_refusal(*refusal);
  if (const auto* message = std::get_if<RequestMessage>(&whole)) {
    check_request(*message);
    route(*message);
  }
  const size_t read_bytes = size == 0 ? 1 : 1 + data[size - 1] % 64;
  check_same(bytes, whole, parse_request(bytes, read_bytes));
  return 0;
}
