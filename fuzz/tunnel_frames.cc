// The frames of an exec or shell session (client/frames.h), over any bytes: taken off the front
// one by one as the client and the agent take them, and followed for the exit code as allotd
// follows them between the two, whole and in pieces (sizes chosen by the first byte).
// Properties: nothing crashes or throws; a frame taken is what encode_frame makes of it, and no
// more than kMaxFramePayload; a malformed stream takes nothing more; the exit code allotd sees is
// that of the last exit frame, however the bytes are split.
#include <cstdint>
#include <optional>
#include <string>

#include "check.h"
#include "client/frames.h"

namespace allot::net {
namespace {

using fuzz::require;

// The exit code of the last exit frame taken whole before anything malformed, if any.
std::optional<int> take_all(std::string bytes, bool& malformed) {
  std::optional<int> code;
  malformed = false;
  while (auto frame = take_frame(bytes, malformed)) {
    require(frame->payload.size() <= kMaxFramePayload, "a payload is within its limit");
    const std::string encoded = encode_frame(frame->kind, frame->payload);
    require(encoded.size() == kFrameHeader + frame->payload.size(),
            "a frame is its header and payload");
    if (frame->kind == FrameKind::kExit) code = exit_code_of(frame->payload);
  }
  std::string left = bytes;
  bool again = false;
  require(!malformed || !take_frame(left, again), "a malformed stream takes nothing more");
  return code;
}

std::optional<int> watch(std::string_view bytes, size_t piece) {
  ExitWatcher watcher;
  for (size_t at = 0; at < bytes.size(); at += piece) watcher.see(bytes.substr(at, piece));
  return watcher.exit_code();
}

}  // namespace
}  // namespace allot::net

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot::net;
  using allot::fuzz::require;
  const std::string_view bytes = allot::fuzz::bytes_of(data, size);
  bool malformed = false;
  const std::optional<int> taken = take_all(std::string(bytes), malformed);
  const std::optional<int> whole = watch(bytes, bytes.size() + 1);
  const size_t piece = size == 0 ? 1 : 1 + data[0] % 16;
  require(watch(bytes, piece) == whole, "the exit code seen does not depend on the pieces");
  require(malformed || whole == taken, "the exit code seen is that of the last exit frame");
  return 0;
}
