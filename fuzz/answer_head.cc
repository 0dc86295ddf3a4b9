// The header section of a relayed server's answer (api/answer_head.h), over any bytes.
// Properties: nothing crashes or throws; where a section ends is within the bytes; made CRLF, it
// has no bare LF left, ends where it is whole, and making it CRLF again changes nothing.
#include <cstdint>
#include <string>

#include "api/answer_head.h"
#include "check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  using fuzz::require;
  const std::string_view bytes = fuzz::bytes_of(data, size);
  const auto end = answer_head_end(bytes);
  require(!end || *end <= bytes.size(), "a header section ends within the bytes");
  const std::string head = with_crlf(end ? bytes.substr(0, *end) : bytes);
  for (size_t i = 0; i < head.size(); ++i) {
    require(head[i] != '\n' || (i > 0 && head[i - 1] == '\r'), "no bare LF is left");
  }
  require(with_crlf(head) == head, "making it CRLF again changes nothing");
  if (end) require(answer_head_end(head) == head.size(), "made CRLF, it ends where it is whole");
  return 0;
}
