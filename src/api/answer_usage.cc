#include "api/answer_usage.h"

#include <charconv>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/limits.h"

namespace allot {
namespace {

using nlohmann::json;

TokenCount malformed(std::string why) {
  return TokenCount{.tokens = 0, .malformed = true, .why = std::move(why)};
}

std::optional<int64_t> whole_count(const json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  const int64_t n = value.get<int64_t>();
  if (n < 0 || n > limits::kMaxServiceUseCount) return std::nullopt;
  return n;
}

// An OpenAI usage object: total_tokens, or prompt_tokens plus completion_tokens.
TokenCount read_usage(const json& usage) {
  if (!usage.is_object()) return malformed("'usage' is not an object");
  if (auto total = usage.find("total_tokens"); total != usage.end()) {
    if (auto n = whole_count(*total)) return TokenCount{.tokens = *n};
    return malformed("'usage.total_tokens' is not a count");
  }
  int64_t sum = 0;
  bool any = false;
  for (const char* name : {"prompt_tokens", "completion_tokens"}) {
    auto field = usage.find(name);
    if (field == usage.end()) continue;
    auto n = whole_count(*field);
    if (!n) return malformed(std::string("'usage.") + name + "' is not a count");
    sum += *n;
    any = true;
  }
  if (!any) return malformed("'usage' has no token counts");
  // Each is a count, but both together may not be (the core takes none past the limit).
  if (sum > limits::kMaxServiceUseCount) return malformed("'usage' adds up past a count");
  return TokenCount{.tokens = sum};
}

// A long answer's usage from its kept end: the object after its last "usage" key.
TokenCount from_tail(std::string_view tail) {
  const size_t key = tail.rfind("\"usage\"");
  const size_t open = key == std::string_view::npos ? key : tail.find('{', key);
  if (open == std::string_view::npos) {
    return malformed("the answer is too long and its end holds no usage");
  }
  int depth = 0;
  for (size_t i = open; i < tail.size(); ++i) {
    if (tail[i] == '{') ++depth;
    if (tail[i] == '}' && --depth == 0) {
      const json usage = json::parse(tail.substr(open, i - open + 1), nullptr, false);
      if (usage.is_discarded()) return malformed("the answer's usage is not JSON");
      return read_usage(usage);
    }
  }
  return malformed("the answer's usage is cut short");
}

TokenCount from_json_body(std::string_view body, bool truncated) {
  if (truncated) return from_tail(body);
  const json document = json::parse(body, nullptr, false);
  if (document.is_discarded()) return {};  // Not JSON: no usage to read.
  if (!document.is_object()) return {};
  auto usage = document.find("usage");
  if (usage == document.end() || usage->is_null()) return {};
  return read_usage(*usage);
}

// The last "data:" event of a stream whose JSON carries a usage that is not null.
TokenCount from_events(std::string_view body, bool truncated) {
  // A cut body's first line may be a piece of one: it is skipped.
  if (truncated) {
    const size_t first = body.find('\n');
    body = first == std::string_view::npos ? std::string_view() : body.substr(first + 1);
  }
  TokenCount found;
  while (!body.empty()) {
    const size_t end = body.find('\n');
    std::string_view line = body.substr(0, end);
    body = end == std::string_view::npos ? std::string_view() : body.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with("data:")) continue;
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    const json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) continue;
    auto usage = event.find("usage");
    if (usage == event.end() || usage->is_null()) continue;
    found = read_usage(*usage);
  }
  return found;
}

}  // namespace

void AnswerTap::see(std::string_view data) {
  body.append(data);
  if (body.size() <= kKeep) return;
  truncated = true;
  body.erase(0, body.size() - kTail);
}

TokenCount count_tokens(const AnswerTap& tap) {
  if (tap.has_tokens_header) {
    int64_t n = -1;
    const char* first = tap.tokens_header.data();
    const char* last = first + tap.tokens_header.size();
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec != std::errc() || end != last || n < 0 || n > limits::kMaxServiceUseCount) {
      return malformed(std::string(kTokensHeader) + " is not a count of tokens");
    }
    return TokenCount{.tokens = n};
  }
  // Asked for identity, a replica that compresses anyway hides its usage: counted as unreadable,
  // with the reason, never billed as no tokens.
  if (!tap.content_encoding.empty() && tap.content_encoding != "identity") {
    return malformed("the answer is compressed (Content-Encoding: " +
                     tap.content_encoding.substr(0, 32) + "), so its usage cannot be read");
  }
  if (tap.content_type.starts_with("text/event-stream")) {
    return from_events(tap.body, tap.truncated);
  }
  return from_json_body(tap.body, tap.truncated);
}

}  // namespace allot
