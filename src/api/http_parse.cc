#include "api/http_parse.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "common/limits.h"

namespace allot {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Refusal refusal(int status, std::string_view code, std::string message) {
  return Refusal{.status = status, .code = std::string(code), .message = std::move(message)};
}

// A header over the limit whose request line alone is too long is a URI too long (414), else a
// header too large (431). The parser has the request line once it is whole; before, the buffer
// holds what came of it.
Refusal header_too_large(const RequestParser& parser, const beast::flat_buffer& buffer) {
  const std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
  const bool line_whole = !parser.get().target().empty();
  const size_t line_bytes = line_whole ? parser.get().target().size() : data.find("\r\n");
  if (line_bytes == std::string_view::npos || line_bytes > limits::kMaxTargetBytes) {
    return refusal(414, "uri_too_long",
                   fmt::format("the request target is over {} bytes", limits::kMaxTargetBytes));
  }
  return refusal(431, "header_too_large",
                 fmt::format("the header is over {} bytes", limits::kMaxHeaderBytes));
}

// The bytes of a connection, as Beast's synchronous reads take them: at most `most` bytes a read,
// then the end of the stream.
class BytesStream {
 public:
  BytesStream(std::string_view bytes, size_t most)
      : bytes_(bytes), most_(std::max<size_t>(most, 1)) {}

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    ec = {};
    if (bytes_.empty()) {
      ec = asio::error::eof;
      return 0;
    }
    const size_t n =
        asio::buffer_copy(buffers, asio::buffer(bytes_.data(), std::min(bytes_.size(), most_)));
    bytes_.remove_prefix(n);
    return n;
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  std::string_view bytes_;
  size_t most_;
};

}  // namespace

HttpResponse Refusal::response() const {
  return HttpResponse{
      .status = status,
      .body = fmt::format(R"({{"error":{{"code":"{}","message":"{}"}}}})", code, message)};
}

void limit_parser(RequestParser& parser) {
  parser.body_limit(limits::kMaxBodyBytes);
  parser.header_limit(static_cast<std::uint32_t>(limits::kMaxHeaderBytes));
}

std::optional<Refusal> answer_read_error(const boost::system::error_code& ec,
                                         const RequestParser& parser,
                                         const beast::flat_buffer& buffer) {
  if (ec == beast::error::timeout) {
    return refusal(408, "request_timeout", "the request did not arrive in time");
  }
  if (ec == http::error::body_limit) {
    return refusal(413, "body_too_large",
                   fmt::format("the body is over {} bytes", limits::kMaxBodyBytes));
  }
  if (ec == http::error::header_limit) return header_too_large(parser, buffer);
  if (ec == http::error::buffer_overflow) {
    // Only one piece that has to be whole to be parsed (a trailer, a chunk's line) fills it.
    return refusal(431, "header_too_large",
                   fmt::format("a trailer or a chunk's line is over {} bytes",
                               limits::kMaxConnectionBufferBytes));
  }
  if (ec == http::error::bad_version) {
    return refusal(505, "http_version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served");
  }
  const auto& http_errors = http::make_error_code(http::error::end_of_stream).category();
  if (ec.category() != http_errors || ec == http::error::end_of_stream ||
      ec == http::error::partial_message) {
    return std::nullopt;  // Closed, reset, aborted or cut short: nobody to answer.
  }
  return refusal(400, "malformed_request", fmt::format("malformed HTTP: {}", ec.message()));
}

std::optional<Refusal> check_header(const RequestParser& parser) {
  const auto& message = parser.get();
  if (message.version() / 10 != 1) {
    return refusal(505, "http_version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served");
  }
  if (message.target().size() > limits::kMaxTargetBytes) {
    return refusal(414, "uri_too_long",
                   fmt::format("the request target is over {} bytes", limits::kMaxTargetBytes));
  }
  if (message.version() == 11 && message.count(http::field::host) == 0) {
    return refusal(400, "malformed_request", "an HTTP/1.1 request needs a Host header");
  }
  const bool has_length = message.count(http::field::content_length) > 0;
  const bool has_encoding = message.count(http::field::transfer_encoding) > 0;
  if (has_length && has_encoding) {
    return refusal(400, "malformed_request",
                   "a request may not have both Content-Length and Transfer-Encoding");
  }
  if (has_encoding && !parser.chunked()) {
    return refusal(400, "malformed_request", "a request's Transfer-Encoding must end in chunked");
  }
  return std::nullopt;
}

ReadOutcome parse_request(std::string_view bytes, size_t read_bytes) {
  BytesStream stream(bytes, read_bytes);
  beast::flat_buffer buffer(limits::kMaxConnectionBufferBytes);
  RequestParser parser;
  limit_parser(parser);
  boost::system::error_code ec;
  try {
    http::read_header(stream, buffer, parser, ec);
    if (!ec) {
      if (auto refused = check_header(parser)) return *std::move(refused);
      http::read(stream, buffer, parser, ec);
    }
  } catch (const std::exception&) {
    return Unanswered{};  // The server ends such a connection without a word (a failed check).
  }
  if (ec) {
    if (auto refused = answer_read_error(ec, parser, buffer)) return *std::move(refused);
    return Unanswered{};
  }
  return parser.release();
}

}  // namespace allot

// Boost's assertions in the files that parse requests (src/api/CMakeLists.txt defines
// BOOST_ENABLE_ASSERT_HANDLER for them) throw instead of aborting, so that no stranger's bytes end
// allotd through one: the server ends that connection alone.
namespace boost {

void assertion_failed(char const* expr, char const* function, char const* /*file*/, long /*line*/) {
  // Beast 1.74 asserts n >= 5 in parse_chunk_header where 3 or 4 bytes are valid (the last
  // chunk's "0\r\n", then one byte, with no CRLF of an earlier chunk before them), and the code
  // after the assertion returns need_more for them (boostorg/beast pull request 2861, in Boost
  // 1.86, fixed the assertion): going on serves the request.
  const bool known_wrong =
      std::string_view(expr) == "n >= 5" &&
      std::string_view(function).find("parse_chunk_header") != std::string_view::npos;
  if (known_wrong) return;
  throw std::logic_error(fmt::format("a Boost check failed in {}: {}", function, expr));
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function,
                          char const* /*file*/, long /*line*/) {
  throw std::logic_error(fmt::format("a Boost check failed in {}: {} ({})", function, expr, msg));
}

}  // namespace boost
