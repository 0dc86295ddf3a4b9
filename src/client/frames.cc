#include "client/frames.h"

#include <algorithm>
#include <charconv>

namespace allot::net {

namespace {

bool known(char kind) {
  switch (static_cast<FrameKind>(kind)) {
    case FrameKind::kStdin:
    case FrameKind::kStdinEnd:
    case FrameKind::kResize:
    case FrameKind::kStdout:
    case FrameKind::kStderr:
    case FrameKind::kExit:
      return true;
  }
  return false;
}

}  // namespace

std::string encode_frame(FrameKind kind, std::string_view payload) {
  std::string out;
  out.reserve(kFrameHeader + payload.size());
  out += static_cast<char>(kind);
  const auto size = static_cast<uint32_t>(payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((size >> shift) & 0xff);
  out += payload;
  return out;
}

std::optional<Frame> take_frame(std::string& bytes, bool& malformed) {
  if (bytes.size() < kFrameHeader) return std::nullopt;
  if (!known(bytes[0])) {
    malformed = true;
    return std::nullopt;
  }
  uint32_t size = 0;
  for (size_t i = 1; i < kFrameHeader; ++i)
    size = (size << 8) | static_cast<unsigned char>(bytes[i]);
  if (size > kMaxFramePayload) {
    malformed = true;
    return std::nullopt;
  }
  if (bytes.size() < kFrameHeader + size) return std::nullopt;
  Frame frame{.kind = static_cast<FrameKind>(bytes[0]),
              .payload = bytes.substr(kFrameHeader, size)};
  bytes.erase(0, kFrameHeader + size);
  return frame;
}

int exit_code_of(std::string_view payload) {
  int code = -1;
  constexpr std::string_view kSignal = "signal ";
  const bool signalled = payload.starts_with(kSignal);
  if (signalled) payload.remove_prefix(kSignal.size());
  const auto [end, ec] = std::from_chars(payload.data(), payload.data() + payload.size(), code);
  if (ec != std::errc{} || end != payload.data() + payload.size()) return -1;
  return signalled ? 128 + code : code;
}

void ExitWatcher::see(std::string_view bytes) {
  while (!bytes.empty() && !broken_) {
    if (left_ > 0) {
      const size_t n = std::min(left_, bytes.size());
      if (in_exit_) exit_payload_.append(bytes.substr(0, n));
      bytes.remove_prefix(n);
      left_ -= n;
    } else {
      const size_t n = std::min(kFrameHeader - header_.size(), bytes.size());
      header_.append(bytes.substr(0, n));
      bytes.remove_prefix(n);
      if (header_.size() < kFrameHeader) break;
      if (!known(header_[0])) {
        broken_ = true;
        break;
      }
      uint32_t size = 0;
      for (size_t i = 1; i < kFrameHeader; ++i) {
        size = (size << 8) | static_cast<unsigned char>(header_[i]);
      }
      in_exit_ = static_cast<FrameKind>(header_[0]) == FrameKind::kExit;
      exit_payload_.clear();
      left_ = size;
      header_.clear();
    }
    if (left_ == 0 && in_exit_) {
      code_ = exit_code_of(exit_payload_);
      in_exit_ = false;
    }
  }
}

}  // namespace allot::net
