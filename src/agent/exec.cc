#include "agent/exec.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "client/frames.h"

namespace allot::agent {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using net::FrameKind;
using net::FrameWriter;

namespace {

// How long output may still come after the command has ended (a background process holding its
// terminal), and how long a command whose session broke has between SIGHUP and SIGKILL.
constexpr auto kDrainAfterExit = std::chrono::seconds(2);
constexpr auto kHangupGrace = std::chrono::seconds(2);

// What the command gets: a plain environment, never the agent's own.
constexpr const char* kPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

struct Child {
  pid_t pid = -1;
  int input = -1;   // Its stdin (a TTY's master).
  int output = -1;  // Its stdout (the master, duplicated, for a TTY: stderr goes there too).
  int errors = -1;  // Its stderr; -1 for a TTY.
};

void close_all_from(int first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) != 0) {
    for (int fd = first; fd < 65536; ++fd) ::close(fd);
  }
}

// Only async-signal-safe calls between fork and exec: the agent has other threads.
[[noreturn]] void exec_child(char* const* argv, char* const* envp) {
  close_all_from(3);
  if (::chdir("/") != 0) ::_exit(127);
  ::execvpe(argv[0], argv, envp);
  constexpr std::string_view kCannot = "allot: cannot run the command\n";
  (void)!::write(2, kCannot.data(), kCannot.size());
  ::_exit(127);
}

Result<Child> spawn(const ExecSpec& spec) {
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env = {kPath, "LANG=C.UTF-8", "HOME=/root"};
  if (spec.tty) env.emplace_back("TERM=xterm-256color");
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  Child child;
  if (spec.tty) {
    int master = -1;
    int slave = -1;
    winsize size{};
    size.ws_col = static_cast<unsigned short>(spec.cols);
    size.ws_row = static_cast<unsigned short>(spec.rows);
    if (::openpty(&master, &slave, nullptr, nullptr, &size) != 0) {
      return fail(ErrorCode::kUnavailable, fmt::format("no terminal: {}", std::strerror(errno)));
    }
    child.pid = ::fork();
    if (child.pid == 0) {
      ::setsid();
      ::ioctl(slave, TIOCSCTTY, 0);
      ::dup2(slave, 0);
      ::dup2(slave, 1);
      ::dup2(slave, 2);
      exec_child(argv.data(), envp.data());
    }
    ::close(slave);
    if (child.pid < 0) {
      ::close(master);
      return fail(ErrorCode::kUnavailable, "cannot fork");
    }
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
    child.input = master;
    child.output = ::fcntl(master, F_DUPFD_CLOEXEC, 3);
    return child;
  }
  int in[2];
  int out[2];
  int err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kUnavailable, fmt::format("no pipes: {}", std::strerror(errno)));
  }
  child.pid = ::fork();
  if (child.pid == 0) {
    ::setpgid(0, 0);  // Its own group, so that a broken session ends all it started.
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    exec_child(argv.data(), envp.data());
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (child.pid < 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    return fail(ErrorCode::kUnavailable, "cannot fork");
  }
  child.input = in[1];
  child.output = out[0];
  child.errors = err[0];
  return child;
}

// What the session's parts share: the parts still running and a timer that wakes the session.
struct Session {
  explicit Session(const asio::any_io_executor& executor)
      : wake(executor, asio::steady_timer::time_point::max()) {}
  void done() {
    --running;
    wake.cancel();
  }
  asio::steady_timer wake;
  int running = 0;
  bool stream_ended = false;
};

// The command's output into frames of `kind`, until it ends (EOF, or EIO from a TTY).
awaitable<void> pump_output(asio::posix::stream_descriptor& from, FrameKind kind,
                            FrameWriter& writer) {
  std::vector<char> chunk(size_t{16} * 1024);
  boost::system::error_code ec;
  while (!writer.broken()) {
    const size_t n =
        co_await from.async_read_some(asio::buffer(chunk), asio::redirect_error(use_awaitable, ec));
    if (n > 0) co_await writer.send(kind, std::string_view(chunk.data(), n));
    if (ec) break;
  }
}

// The client's frames: stdin into the command, resizes into its terminal.
awaitable<void> pump_input(net::Stream& stream, asio::posix::stream_descriptor& to, int terminal) {
  std::string bytes(static_cast<const char*>(stream.pending.data().data()), stream.pending.size());
  stream.pending.consume(stream.pending.size());
  std::vector<char> chunk(size_t{16} * 1024);
  boost::system::error_code ec;
  bool malformed = false;
  while (!ec && !malformed) {
    while (auto frame = net::take_frame(bytes, malformed)) {
      if (frame->kind == FrameKind::kStdin && to.is_open()) {
        boost::system::error_code write_ec;
        co_await asio::async_write(to, asio::buffer(frame->payload),
                                   asio::redirect_error(use_awaitable, write_ec));
      } else if (frame->kind == FrameKind::kStdinEnd && terminal < 0) {
        to.close();
      } else if (frame->kind == FrameKind::kResize && terminal >= 0) {
        int cols = 0;
        int rows = 0;
        const std::string& p = frame->payload;
        const size_t space = p.find(' ');
        std::from_chars(p.data(), p.data() + std::min(space, p.size()), cols);
        if (space != std::string::npos)
          std::from_chars(p.data() + space + 1, p.data() + p.size(), rows);
        if (cols > 0 && rows > 0 && cols < 10000 && rows < 10000) {
          winsize size{};
          size.ws_col = static_cast<unsigned short>(cols);
          size.ws_row = static_cast<unsigned short>(rows);
          ::ioctl(terminal, TIOCSWINSZ, &size);
        }
      }
    }
    const size_t n = co_await stream.conn.async_read_some(asio::buffer(chunk),
                                                          asio::redirect_error(use_awaitable, ec));
    bytes.append(chunk.data(), n);
  }
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return std::to_string(WEXITSTATUS(status));
}

}  // namespace

awaitable<void> run_exec(net::Stream& stream, ExecSpec spec) {
  auto executor = co_await asio::this_coro::executor;
  FrameWriter writer(stream);
  if (spec.argv.empty()) spec.argv = {"/bin/sh"};
  auto child = spawn(spec);
  if (!child) {
    const std::string why = "allot: " + child.error().message + "\n";
    co_await writer.send(FrameKind::kStderr, why);
    co_await writer.send(FrameKind::kExit, "127");
    co_return;
  }
  asio::posix::stream_descriptor input(executor, child->input);
  asio::posix::stream_descriptor output(executor, child->output);
  std::optional<asio::posix::stream_descriptor> errors;
  if (child->errors >= 0) errors.emplace(executor, child->errors);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child->pid, 0));
  asio::posix::stream_descriptor exited(executor, pidfd >= 0 ? pidfd : ::dup(child->output));

  Session session(executor);
  auto part = [&session](awaitable<void> work) {
    ++session.running;
    asio::co_spawn(session.wake.get_executor(), std::move(work),
                   [&session](const std::exception_ptr&) { session.done(); });
  };
  part(pump_output(output, FrameKind::kStdout, writer));
  if (errors) part(pump_output(*errors, FrameKind::kStderr, writer));
  // The input's end, unlike the outputs', does not wait: the stream breaking ends the command.
  asio::co_spawn(executor, pump_input(stream, input, spec.tty ? child->input : -1),
                 [&session](const std::exception_ptr&) {
                   session.stream_ended = true;
                   session.wake.cancel();
                 });

  boost::system::error_code ec;
  int status = 0;
  bool hung_up = false;
  asio::steady_timer deadline(executor);
  for (;;) {
    const pid_t reaped = ::waitpid(child->pid, &status, WNOHANG);
    if (reaped == child->pid) break;
    if (session.stream_ended && !hung_up) {
      hung_up = true;  // Nobody to talk to: the command's whole group is ended.
      ::kill(-child->pid, SIGHUP);
      deadline.expires_after(kHangupGrace);
      deadline.async_wait([pid = child->pid](const boost::system::error_code& e) {
        if (!e) ::kill(-pid, SIGKILL);
      });
    }
    if (pidfd >= 0) {
      exited.async_wait(asio::posix::stream_descriptor::wait_read,
                        [&session](const boost::system::error_code&) { session.wake.cancel(); });
    }
    session.wake.expires_after(pidfd >= 0 ? std::chrono::seconds(60) : std::chrono::seconds(1));
    co_await session.wake.async_wait(asio::redirect_error(use_awaitable, ec));
    exited.cancel(ec);
  }
  deadline.cancel();
  // What it wrote last, then its exit.
  asio::steady_timer drain(executor);
  drain.expires_after(kDrainAfterExit);
  while (session.running > 0 && drain.expiry() > asio::steady_timer::clock_type::now()) {
    session.wake.expires_at(drain.expiry());
    co_await session.wake.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  output.close(ec);
  if (errors) errors->close(ec);
  while (session.running > 0) {
    session.wake.expires_after(std::chrono::milliseconds(50));
    co_await session.wake.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  const std::string code = exit_text(status);
  co_await writer.send(FrameKind::kExit, code);
  stream.conn.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  // The client closes once it has the exit; the input pump then ends.
  input.close(ec);
  while (!session.stream_ended) {
    session.wake.expires_after(std::chrono::seconds(5));
    co_await session.wake.async_wait(asio::redirect_error(use_awaitable, ec));
    if (ec != asio::error::operation_aborted) break;
  }
  stream.conn.socket().close(ec);
  while (!session.stream_ended) {
    session.wake.expires_after(std::chrono::milliseconds(50));
    co_await session.wake.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace allot::agent
