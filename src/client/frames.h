// The frames of an exec or shell session (docs/api.md, "Exec and shell"): each is a kind byte, a
// 4-byte big-endian length and that many bytes. The client sends stdin, resize and stdin-end; the
// agent sends stdout, stderr and, last, exit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace allot::net {

enum class FrameKind : char {
  kStdin = 'i',
  kStdinEnd = 'c',  // No more stdin: the command's stdin is closed.
  kResize = 'r',    // "COLS ROWS": the terminal's new size (a TTY session).
  kStdout = 'o',
  kStderr = 'e',
  kExit = 'x',  // The exit code in decimal, or "signal N"; the last frame.
};

// The command of a shell session (`allot shell`, the dashboard's shell), run by /bin/sh -c: a
// login shell, bash where the image has it, else sh.
inline constexpr const char* kLoginShell =
    "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi";

inline constexpr size_t kFrameHeader = 5;
inline constexpr size_t kMaxFramePayload = size_t{64} * 1024;

struct Frame {
  FrameKind kind;
  std::string payload;
};

std::string encode_frame(FrameKind kind, std::string_view payload);

// Takes the first whole frame off the front of `bytes`; nothing while it is not whole. Sets
// `malformed` (and takes nothing) for an unknown kind or a payload over kMaxFramePayload.
std::optional<Frame> take_frame(std::string& bytes, bool& malformed);

// The exit code an exit frame's payload stands for: a signal N is 128 + N, as shells give it.
int exit_code_of(std::string_view payload);

// Follows frames as they pass (allotd between an agent and a client), for the exit code alone:
// it keeps a frame's header while it comes and an exit frame's payload, nothing else.
class ExitWatcher {
 public:
  void see(std::string_view bytes);
  // Set once an exit frame has passed whole.
  std::optional<int> exit_code() const { return code_; }

 private:
  std::string header_;
  size_t left_ = 0;  // Payload bytes of the current frame still to come.
  bool in_exit_ = false;
  bool broken_ = false;  // Not frames after all: nothing more is read.
  std::string exit_payload_;
  std::optional<int> code_;
};

}  // namespace allot::net
