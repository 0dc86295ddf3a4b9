// exec, shell: a command, or an interactive shell, in a running instance, through allotd and its
// node's tunnel. exec exits with the command's exit code.
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "client/frames.h"
#include "client/stream.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
using net::FrameKind;

// The local terminal in raw mode while a TTY session runs (`wanted`), as it was after.
class RawTerminal {
 public:
  explicit RawTerminal(bool wanted) {
    if (!wanted || ::isatty(0) == 0 || ::tcgetattr(0, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(0, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

std::pair<int, int> terminal_size() {
  winsize size{};
  if (::ioctl(1, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 && size.ws_row > 0) {
    return {size.ws_col, size.ws_row};
  }
  return {80, 24};
}

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnauthenticated:
    case ErrorCode::kForbidden:
      return kDenied;
    case ErrorCode::kNotFound:
      return kNotFound;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kConflict:
      return kRejected;
    default:
      return kServerError;
  }
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

struct Outcome {
  std::optional<int> exit_code;  // The command's.
  int failure = kOk;             // Why there is none.
};

asio::awaitable<void> send_frame(net::FrameWriter& writer, FrameKind kind, std::string payload) {
  co_await writer.send(kind, payload);
}

// stdin, read on a thread of its own (it may be a file, which cannot be waited on), into frames.
void read_stdin(asio::io_context& io, net::FrameWriter& writer) {
  std::thread([&io, &writer] {
    std::vector<char> chunk(size_t{16} * 1024);
    for (;;) {
      const ssize_t n = ::read(0, chunk.data(), chunk.size());
      if (n <= 0) break;
      std::string data(chunk.data(), static_cast<size_t>(n));
      asio::co_spawn(io, send_frame(writer, FrameKind::kStdin, std::move(data)), asio::detached);
    }
    asio::co_spawn(io, send_frame(writer, FrameKind::kStdinEnd, ""), asio::detached);
  }).detach();
}

asio::awaitable<void> converse(asio::io_context& io, net::Endpoint server, std::string target,
                               std::string authorization, bool tty, Outcome& outcome) {
  auto stream = co_await net::open_upgraded(std::move(server), std::move(target),
                                            std::move(authorization), "allot-exec");
  if (!stream) {
    std::cerr << "error: " << stream.error().message << "\n";
    outcome.failure = exit_code_for(stream.error().code);
    co_return;
  }
  net::FrameWriter writer(*stream);
  read_stdin(io, writer);
  asio::signal_set resized(io, SIGWINCH);
  std::function<void()> watch_size = [&] {
    resized.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      const auto [cols, rows] = terminal_size();
      asio::co_spawn(io, send_frame(writer, FrameKind::kResize, fmt::format("{} {}", cols, rows)),
                     asio::detached);
      watch_size();
    });
  };
  if (tty) watch_size();
  std::string bytes(static_cast<const char*>(stream->pending.data().data()),
                    stream->pending.size());
  std::vector<char> chunk(size_t{64} * 1024);
  boost::system::error_code ec;
  bool malformed = false;
  while (!outcome.exit_code) {
    while (auto frame = net::take_frame(bytes, malformed)) {
      if (frame->kind == FrameKind::kStdout) write_all(1, frame->payload);
      if (frame->kind == FrameKind::kStderr) write_all(2, frame->payload);
      if (frame->kind == FrameKind::kExit) outcome.exit_code = net::exit_code_of(frame->payload);
    }
    if (outcome.exit_code || malformed || ec) break;
    const size_t n = co_await stream->conn.async_read_some(
        asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    bytes.append(chunk.data(), n);
  }
  if (!outcome.exit_code) {
    std::cerr << "\nerror: the session broke off before the command ended\n";
    outcome.failure = kUnreachable;
  }
  resized.cancel(ec);
  io.stop();
}

int run_session(Session& session, const std::string& id, const std::vector<std::string>& argv,
                bool tty) {
  int unreached = kOk;
  const auto url = session.server_url(unreached);
  if (!url) return unreached;
  auto server = net::parse_base_url(*url);
  if (!server) {
    std::cerr << "error: " << server.error().message << "\n";
    return kUsage;
  }
  const auto [cols, rows] = terminal_size();
  const std::string target =
      fmt::format("/v1/instances/{}/exec?command={}&tty={}&cols={}&rows={}", percent_encode(id),
                  percent_encode(json(argv).dump()), tty ? "true" : "false", cols, rows);
  asio::io_context io{1};
  Outcome outcome;
  {
    RawTerminal raw(tty);
    asio::co_spawn(io,
                   converse(io, *server, target, "Bearer " + session.settings().key, tty, outcome),
                   asio::detached);
    io.run();
  }
  return outcome.exit_code ? *outcome.exit_code : outcome.failure;
}

}  // namespace

void add_exec_commands(CLI::App& app, Action& action) {
  static std::string id;
  static std::vector<std::string> command;
  static bool tty = false;

  CLI::App* exec = app.add_subcommand(
      "exec",
      "run a command in a running instance: allot exec INSTANCE -- CMD (exits with its code)");
  exec->add_option("id", id, "the instance's id")->required();
  exec->add_flag("-t,--tty", tty, "give the command a terminal");
  exec->add_option("command", command, "the command and its arguments")->required();
  exec->callback([&action] {
    action = [](Session& session) { return run_session(session, id, command, tty); };
  });

  CLI::App* shell =
      app.add_subcommand("shell", "an interactive shell in a running instance (bash, else sh)");
  shell->add_option("id", id, "the instance's id")->required();
  shell->callback([&action] {
    action = [](Session& session) {
      return run_session(session, id, {"/bin/sh", "-c", net::kLoginShell}, true);
    };
  });
}

}  // namespace allot::cli
