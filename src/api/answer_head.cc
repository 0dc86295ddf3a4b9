#include "api/answer_head.h"

namespace allot {

std::optional<size_t> answer_head_end(std::string_view bytes) {
  for (size_t at = bytes.find('\n'); at != std::string_view::npos; at = bytes.find('\n', at + 1)) {
    const std::string_view after = bytes.substr(at + 1);
    if (after.starts_with('\n')) return at + 2;
    if (after.starts_with("\r\n")) return at + 3;
  }
  return std::nullopt;
}

std::string with_crlf(std::string_view head) {
  std::string out;
  out.reserve(head.size() + head.size() / 16);
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) out += '\r';
    out += head[i];
  }
  return out;
}

}  // namespace allot
