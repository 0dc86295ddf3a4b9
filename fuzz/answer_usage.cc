// What a replica's answer says of the tokens it used (count_tokens, api/answer_usage.h), over any
// bytes. The first byte sets up the answer: bit 0 an X-Allot-Tokens header (its value the rest's
// first line), bits 1-2 the content type (JSON, an event stream, one with a charset, plain text),
// bit 3 a body kept only in part (truncated: its end), bits 4-5 the content encoding (none,
// identity, gzip); the rest is the body, fed to the tap in pieces as the proxy feeds it.
// Properties: nothing crashes or throws; a count is within kMaxServiceUseCount; a malformed usage
// says why; a compressed answer's usage is never read.
#include <array>
#include <cstdint>
#include <string>

#include "api/answer_usage.h"
#include "check.h"
#include "common/limits.h"

namespace allot {
namespace {

using fuzz::require;

AnswerTap tap_of(uint8_t setup, std::string_view rest) {
  static constexpr std::array<std::string_view, 4> kTypes = {
      "application/json", "text/event-stream", "text/event-stream; charset=utf-8", "text/plain"};
  static constexpr std::array<std::string_view, 4> kEncodings = {"", "identity", "gzip", "br"};
  AnswerTap tap{.status = 200};
  if ((setup & 1) != 0) {
    const size_t line = std::min(rest.find('\n'), rest.size());
    tap.has_tokens_header = true;
    tap.tokens_header = std::string(rest.substr(0, line));
    rest.remove_prefix(std::min(line + 1, rest.size()));
  }
  tap.content_type = std::string(kTypes[(setup >> 1) & 3]);
  tap.content_encoding = std::string(kEncodings[(setup >> 4) & 3]);
  // In pieces of a few hundred bytes, as a relayed body comes.
  for (size_t at = 0; at < rest.size(); at += 317) tap.see(rest.substr(at, 317));
  tap.truncated = tap.truncated || (setup & 8) != 0;
  return tap;
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  using fuzz::require;
  if (size == 0) return 0;
  const AnswerTap tap = tap_of(data[0], fuzz::bytes_of(data + 1, size - 1));
  const TokenCount count = count_tokens(tap);
  require(count.tokens >= 0 && count.tokens <= limits::kMaxServiceUseCount,
          "a count is within kMaxServiceUseCount");
  require(count.malformed == !count.why.empty(), "a malformed usage says why, and only then");
  require(!count.malformed || count.tokens == 0, "a malformed usage counts nothing");
  const bool compressed = !tap.content_encoding.empty() && tap.content_encoding != "identity";
  require(!compressed || tap.has_tokens_header || count.malformed,
          "a compressed answer's usage is never read");
  return 0;
}
