#include "daemon/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX gives it no header.

namespace allot {
namespace {

constexpr size_t kMaxCaptureBytes = 64 << 10;

using Clock = std::chrono::steady_clock;

int64_t ms_left(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// The environment's entries, then `extra`, as the NULL-terminated list posix_spawn wants.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) out.emplace_back(*e);
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Spawns argv in a new process group with the given file actions.
Result<pid_t> spawn(std::vector<std::string> argv, std::vector<std::string> env,
                    posix_spawn_file_actions_t* actions) {
  // Nothing of allotd's but the three standard streams: not its listening socket (a child that
  // outlives allotd would keep the port, and its agents would talk to a socket no one serves),
  // nor its connections or store.
  posix_spawn_file_actions_addclosefrom_np(actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // allotd blocks SIGTERM; its children must not.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args = pointers(argv);
  std::vector<char*> envp = pointers(env);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], actions, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot start {}: {}", argv.front(), std::strerror(rc)));
  }
  return pid;
}

void read_some(int fd, std::string& into, bool& open) {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n <= 0) {
    if (n == 0 || errno != EINTR) open = false;
    return;
  }
  const size_t room = kMaxCaptureBytes - std::min(kMaxCaptureBytes, into.size());
  into.append(buffer.data(), std::min(room, static_cast<size_t>(n)));
}

}  // namespace

Result<ScriptResult> run_script(const std::string& command, const std::vector<std::string>& env,
                                int64_t timeout_ms) {
  std::array<int, 2> out_pipe{-1, -1};
  std::array<int, 2> err_pipe{-1, -1};
  if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0 || ::pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    return fail(ErrorCode::kUnavailable, "cannot make a pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  auto pid = spawn({"/bin/sh", "-c", command}, environment_with(env), &actions);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (!pid) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return std::unexpected(pid.error());
  }
  ScriptResult result;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open) {
    const int64_t left = ms_left(deadline);
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{pollfd{.fd = out_open ? out_pipe[0] : -1, .events = POLLIN},
                              pollfd{.fd = err_open ? err_pipe[0] : -1, .events = POLLIN}};
    const int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left, 100)));
    if (ready < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP)) != 0)
      read_some(out_pipe[0], result.out, out_open);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP)) != 0)
      read_some(err_pipe[0], result.err, err_open);
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  // The streams are closed; the script may still run (it closed them, or it ran out of time).
  int status = 0;
  while (!result.timed_out) {
    const pid_t done = ::waitpid(*pid, &status, WNOHANG);
    if (done == *pid) {
      result.exit_code = decode_status(status);
      return result;
    }
    if (ms_left(deadline) <= 0) result.timed_out = true;
    if (!result.timed_out) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-*pid, SIGKILL);
  ::waitpid(*pid, &status, 0);
  result.exit_code = decode_status(status);
  return result;
}

Result<pid_t> start_program(const std::vector<std::string>& argv, const std::string& out_path,
                            const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  auto pid = spawn(argv, environment_with({}), &actions);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

bool stop_program(pid_t pid, int64_t grace_ms) {
  if (pid <= 0) return true;
  auto gone = [pid] {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    // Not our child (allotd restarted): ask the kernel whether it still exists.
    if (done == -1 && errno == ECHILD) return ::kill(pid, 0) != 0 && errno == ESRCH;
    return done == pid;
  };
  ::kill(-pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::milliseconds(grace_ms);
  while (Clock::now() < deadline) {
    if (gone()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);
  for (int i = 0; i < 100; ++i) {
    if (gone()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace allot
