// What a replica's answer says of the tokens it used, for billing callers of a shared service
// per token: the X-Allot-Tokens header when the answer has one, else the OpenAI-style "usage"
// object of a JSON answer, or of the last server-sent event that carries one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace allot {

inline constexpr std::string_view kTokensHeader = "X-Allot-Tokens";

// What the proxy keeps of an answer while it relays it: its status and headers, and its body up
// to a bound (past it, only the last part, where a stream's usage comes).
struct AnswerTap {
  static constexpr size_t kKeep = size_t{1} << 20;
  static constexpr size_t kTail = size_t{64} << 10;

  int status = 0;
  bool has_tokens_header = false;
  std::string tokens_header;
  std::string content_type;
  std::string content_encoding;  // Empty or "identity" unless the replica compressed its answer.
  std::string body;
  bool truncated = false;  // The body passed kKeep: `body` holds its last kTail bytes at least.

  void see(std::string_view data);
};

struct TokenCount {
  int64_t tokens = 0;
  bool malformed = false;  // A usage was there and could not be read; `why` says how.
  std::string why;
};

// The tokens the answer reports; none (0) when it reports no usage.
TokenCount count_tokens(const AnswerTap& tap);

}  // namespace allot
