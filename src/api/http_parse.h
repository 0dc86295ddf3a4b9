// How allotd's server reads a request off a connection, apart from the connection itself: the
// parser's limits, the faults of a header that Beast reads without complaint, what to answer a read
// that failed, and the whole read of one request from a string of bytes, which lets tests and the
// fuzz targets (fuzz/http_request.cc) give the server's parsing any bytes without a socket.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "api/http.h"
#include "common/asio.h"

namespace allot {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
using RequestMessage = boost::beast::http::request<boost::beast::http::string_body>;

// A request refused before any route sees it: the status, and the code and message of the JSON
// error body the server answers with before it closes the connection.
struct Refusal {
  int status = 400;
  std::string code;
  std::string message;

  // The answer: {"error":{"code":CODE,"message":MESSAGE}} with the status.
  HttpResponse response() const;
};

// Sets the limits every request is read under: a body of at most kMaxBodyBytes, a header of at
// most kMaxHeaderBytes (common/limits.h).
void limit_parser(RequestParser& parser);

// What to answer a read that failed with `ec`: nothing when the peer went away, was closed here or
// cut its request short (the connection is then closed without an answer), else the status HTTP
// gives for the fault: 408, 413, 414 or 431, 505, or 400. `parser` and `buffer` are those of the
// read, for telling a long request line (414) from a long header (431).
[[nodiscard]] std::optional<Refusal> answer_read_error(const boost::system::error_code& ec,
                                                       const RequestParser& parser,
                                                       const boost::beast::flat_buffer& buffer);

// The faults of a whole header that Beast reads without complaint: a version other than 1.x
// (505), a target over kMaxTargetBytes (414), an HTTP/1.1 request without Host, both
// Content-Length and Transfer-Encoding, or a Transfer-Encoding that does not end in chunked (400).
// Nothing for a header the server goes on to read the body of.
[[nodiscard]] std::optional<Refusal> check_header(const RequestParser& parser);

// Reading one request ended before a whole one came and without a fault to answer: the peer sent
// nothing or closed in the middle, and the server closes the connection without a word.
struct Unanswered {};

using ReadOutcome = std::variant<RequestMessage, Refusal, Unanswered>;

// Reads one request from `bytes` exactly as the server reads a connection's first: through Beast's
// reads of the header and then of the body, with limit_parser's limits, a buffer bounded at
// kMaxConnectionBufferBytes, check_header between the two, and answer_read_error for a read that
// fails. The connection gives at most `read_bytes` (at least 1) at each read, as TCP may split a
// request anywhere, and then ends. Bytes after the request are left unread. Never throws: what
// the parser throws (Boost's failed assertions among it, http_parse.cc) leaves the request
// Unanswered, as the server ends that connection without a word.
[[nodiscard]] ReadOutcome parse_request(std::string_view bytes, size_t read_bytes = 65536);

}  // namespace allot
