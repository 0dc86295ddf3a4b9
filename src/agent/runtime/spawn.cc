// The shim and the workload's side of fork. Everything after fork() below runs in a child of a
// multi-threaded process, so it uses only async-signal-safe calls on data prepared beforehand.
#include "agent/runtime/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <string>
#include <system_error>

namespace allot::agent {
namespace {

// What the shim tells the agent once the workload has exec'd or failed to: one write of less
// than PIPE_BUF bytes, so it arrives whole.
struct ShimReport {
  int32_t workload_pid = 0;
  int32_t start_errno = 0;
};

// Pointers into the LaunchPlan and the pipes' ends, all taken before fork.
struct ShimArgs {
  std::vector<const char*> exec_paths;
  std::vector<char*> argv;  // Null-terminated, as execve wants.
  std::vector<char*> envp;  // Null-terminated.
  const char* log_path = nullptr;
  const char* work_dir = nullptr;
  const char* exit_path = nullptr;
  const char* exit_tmp_path = nullptr;
  const char* cgroup_dir = nullptr;    // nullptr: no cgroup.
  const char* cgroup_procs = nullptr;  // nullptr: no cgroup.
  const char* alive_path = nullptr;    // nullptr: no watchdog.
  int64_t orphan_timeout_ms = 0;
  std::vector<char*> cleanup_argv;  // Null-terminated; just the null: none.
  int report_fd = -1;               // Shim -> agent: ShimReport.
  int exec_read_fd = -1;            // Workload -> shim: errno when exec fails.
  int exec_write_fd = -1;           // CLOEXEC: a successful exec closes it, the shim reads EOF.
  std::array<int, 3> kept_fds{};    // The three above, ascending.
};

// --- Async-signal-safe helpers: no allocation, no locks, no stdio. ---

// Calls `io` (::read or ::write) until `size` bytes have moved, again after EINTR; false on an
// error or an early end of file.
template <typename Byte, typename Io>
bool transfer_all(int fd, Byte* p, size_t size, Io io) {
  while (size > 0) {
    const ssize_t n = io(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t size) {
  return transfer_all(fd, static_cast<const char*>(data), size, ::write);
}

bool read_all(int fd, void* data, size_t size) {
  return transfer_all(fd, static_cast<char*>(data), size, ::read);
}

// Writes `value` in decimal at `out` (room for 12 bytes) and returns how many bytes it took.
size_t format_decimal(int64_t value, char* out) {
  char digits[24];
  size_t count = 0;
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude > 0);
  size_t length = 0;
  if (negative) out[length++] = '-';
  while (count > 0) out[length++] = digits[--count];
  return length;
}

// Opens a file at fd 3 or above, so that dup2 onto 0, 1 and 2 never clobbers it.
int open_above_stdio(const char* path, int flags, mode_t mode) {
  int fd = ::open(path, flags | O_CLOEXEC, mode);
  if (fd >= 0 && fd < 3) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    ::close(fd);
    fd = moved;
  }
  return fd;
}

// The agent's handlers, ignored signals and blocked mask must not leak into the children:
// ignored signals and the mask even survive exec.
void reset_signals() {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // Some refuse; fine.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Closes every inherited descriptor but the shim's pipes, so that the agent's sockets and files
// are not held open by shims that outlive it.
void close_other_fds(const std::array<int, 3>& kept) {
  unsigned int from = 3;
  for (const int fd : kept) {
    if (static_cast<unsigned int>(fd) > from) ::close_range(from, fd - 1, 0);
    from = std::max(from, static_cast<unsigned int>(fd) + 1);
  }
  ::close_range(from, ~0U, 0);
}

void write_outcome(const ShimArgs& args, const char* word, int64_t value) {
  char text[48];
  size_t length = 0;
  while (*word != '\0') text[length++] = *word++;
  text[length++] = ' ';
  length += format_decimal(value, text + length);
  text[length++] = '\n';
  const int fd = ::open(args.exit_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = write_all(fd, text, length) && ::fsync(fd) == 0;
  ::close(fd);
  if (written) ::rename(args.exit_tmp_path, args.exit_path);
}

void report(const ShimArgs& args, pid_t workload_pid, int start_errno) {
  const ShimReport message{static_cast<int32_t>(workload_pid), static_cast<int32_t>(start_errno)};
  write_all(args.report_fd, &message, sizeof message);  // The agent may be gone; that is fine.
  ::close(args.report_fd);
}

[[noreturn]] void shim_failed(const ShimArgs& args, int err) {
  report(args, 0, err);
  write_outcome(args, "failed", err);
  ::_exit(0);
}

[[noreturn]] void exec_failed(const ShimArgs& args, int err) {
  write_all(args.exec_write_fd, &err, sizeof err);
  ::_exit(127);
}

// Best effort: when joining fails the workload runs without its limits rather than not at all.
void join_cgroup(const char* procs_path) {
  char pid_text[16];
  const size_t length = format_decimal(::getpid(), pid_text);
  // O_CREAT is harmless on cgroupfs, where the file exists, and lets tests use a plain directory.
  const int fd = ::open(procs_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, pid_text, length);
  ::close(fd);
}

[[noreturn]] void run_workload(const ShimArgs& args, int log_fd) {
  // Its own process group, so that stop signals reach the workload's whole tree but not the shim.
  ::setpgid(0, 0);
  reset_signals();
  if (args.cgroup_procs != nullptr) join_cgroup(args.cgroup_procs);
  if (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) {
    exec_failed(args, errno);
  }
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0) exec_failed(args, errno);
  if (null_fd != STDIN_FILENO) {
    ::dup2(null_fd, STDIN_FILENO);
    ::close(null_fd);
  }
  if (::chdir(args.work_dir) != 0) exec_failed(args, errno);
  // As execvp: a file found but not executable is reported over one that is not found.
  int err = ENOENT;
  bool denied = false;
  for (const char* path : args.exec_paths) {
    ::execve(path, args.argv.data(), args.envp.data());
    err = errno;
    if (err == EACCES) {
      denied = true;
    } else if (err != ENOENT && err != ENOTDIR) {
      break;
    }
  }
  exec_failed(args, denied && (err == ENOENT || err == ENOTDIR) ? EACCES : err);
}

int64_t realtime_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// When the agent was last alive: the alive file's modification time, and never before `floor`
// (the shim's start), so that a missing file still gives the agent a whole timeout.
int64_t agent_seen_ms(const ShimArgs& args, int64_t floor) {
  struct stat info{};
  if (::stat(args.alive_path, &info) != 0) return floor;
  const int64_t seen =
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1'000'000;
  return std::max(seen, floor);
}

// Runs the plan's cleanup for an orphaned workload and waits for it, for kOrphanGraceMs at most
// (then kills it): what the workload's podman client left running is ended by it.
void clean_up_orphan(const ShimArgs& args) {
  if (args.cleanup_argv.size() < 2) return;
  const pid_t cleaner = ::fork();
  if (cleaner < 0) return;
  if (cleaner == 0) {
    reset_signals();
    const int null_fd = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null_fd >= 0; ++fd) ::dup2(null_fd, fd);
    ::execve(args.cleanup_argv[0], args.cleanup_argv.data(), args.envp.data());
    ::_exit(127);
  }
  const int64_t until_ms = realtime_ms() + kOrphanGraceMs;
  int status = 0;
  while (::waitpid(cleaner, &status, WNOHANG) == 0) {
    if (realtime_ms() >= until_ms) {
      ::kill(cleaner, SIGKILL);
      ::waitpid(cleaner, &status, 0);
      return;
    }
    const timespec pause{0, 100'000'000};
    ::nanosleep(&pause, nullptr);
  }
}

// Waits for the workload's end. With a watchdog, it wakes at every SIGCHLD or every 250 ms, and
// stops the workload's group once the agent has not been seen for the timeout: SIGTERM, then
// SIGKILL kOrphanGraceMs later, then the plan's cleanup. The outcome is then the signal, as for
// any stop.
pid_t wait_for_workload(const ShimArgs& args, pid_t child, int& status) {
  if (args.alive_path == nullptr) {
    pid_t waited = 0;
    do {
      waited = ::waitpid(child, &status, 0);
    } while (waited < 0 && errno == EINTR);
    return waited;
  }
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  const int64_t started_ms = realtime_ms();
  int64_t kill_at_ms = 0;  // Not 0 once SIGTERM has been sent.
  for (;;) {
    const pid_t waited = ::waitpid(child, &status, WNOHANG);
    if (waited != 0 && !(waited < 0 && errno == EINTR)) {
      if (kill_at_ms != 0) clean_up_orphan(args);
      return waited;
    }
    const int64_t now_ms = realtime_ms();
    if (kill_at_ms == 0 && now_ms - agent_seen_ms(args, started_ms) > args.orphan_timeout_ms) {
      ::kill(-child, SIGTERM);
      kill_at_ms = now_ms + kOrphanGraceMs;
    } else if (kill_at_ms != 0 && now_ms >= kill_at_ms) {
      ::kill(-child, SIGKILL);
    }
    const timespec pause{0, 250'000'000};
    ::sigtimedwait(&chld, nullptr, &pause);
  }
}

[[noreturn]] void run_shim(const ShimArgs& args) {
  ::setsid();  // Its own session: the shim outlives the agent and its terminal.
  reset_signals();
  // Blocked in the shim, so that the watchdog's sigtimedwait wakes when the workload ends; the
  // workload's reset_signals unblocks it again.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  // A write to the agent after the agent has died must fail, not kill the shim.
  ::signal(SIGPIPE, SIG_IGN);
  close_other_fds(args.kept_fds);
  const int log_fd = open_above_stdio(args.log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (log_fd < 0) shim_failed(args, errno);
  const pid_t child = ::fork();
  if (child < 0) shim_failed(args, errno);
  if (child == 0) run_workload(args, log_fd);
  ::setpgid(child, child);  // Also here, so that the group exists whichever process runs first.
  ::close(args.exec_write_fd);
  ::close(log_fd);
  int start_errno = 0;
  if (!read_all(args.exec_read_fd, &start_errno, sizeof start_errno)) start_errno = 0;
  ::close(args.exec_read_fd);
  report(args, child, start_errno);

  int status = 0;
  const pid_t waited = wait_for_workload(args, child, status);
  if (start_errno != 0) {
    write_outcome(args, "failed", start_errno);
  } else if (waited == child && WIFSIGNALED(status)) {
    write_outcome(args, "signal", WTERMSIG(status));
  } else if (waited == child && WIFEXITED(status)) {
    write_outcome(args, "exited", WEXITSTATUS(status));
  }
  if (args.cgroup_dir != nullptr) ::rmdir(args.cgroup_dir);
  ::_exit(0);
}

// execve takes char* const[] for historical reasons; it does not write through the pointers.
char* exec_arg(const std::string& text) { return const_cast<char*>(text.c_str()); }

bool make_pipe(std::array<int, 2>& fds) {
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return false;
  for (int& fd : fds) {
    if (fd < 3) {  // Kept clear of 0, 1 and 2, which the workload's dup2 calls overwrite.
      const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      ::close(fd);
      fd = moved;
    }
  }
  return fds[0] >= 0 && fds[1] >= 0;
}

void close_pipe(const std::array<int, 2>& fds) {
  for (const int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace

Result<Spawned> spawn_workload(const LaunchPlan& plan) {
  const std::string cgroup_procs = plan.cgroup_dir + "/cgroup.procs";
  ShimArgs args;
  for (const auto& path : plan.exec_paths) args.exec_paths.push_back(path.c_str());
  for (const auto& arg : plan.argv) args.argv.push_back(exec_arg(arg));
  args.argv.push_back(nullptr);
  for (const auto& var : plan.envp) args.envp.push_back(exec_arg(var));
  args.envp.push_back(nullptr);
  args.log_path = plan.log_path.c_str();
  args.work_dir = plan.work_dir.c_str();
  args.exit_path = plan.exit_path.c_str();
  args.exit_tmp_path = plan.exit_tmp_path.c_str();
  if (!plan.cgroup_dir.empty()) {
    args.cgroup_dir = plan.cgroup_dir.c_str();
    args.cgroup_procs = cgroup_procs.c_str();
  }
  if (!plan.alive_path.empty() && plan.orphan_timeout_ms > 0) {
    args.alive_path = plan.alive_path.c_str();
    args.orphan_timeout_ms = plan.orphan_timeout_ms;
  }
  for (const auto& arg : plan.orphan_cleanup) args.cleanup_argv.push_back(exec_arg(arg));
  args.cleanup_argv.push_back(nullptr);

  std::array<int, 2> report_pipe{-1, -1};
  std::array<int, 2> exec_pipe{-1, -1};
  if (!make_pipe(report_pipe) || !make_pipe(exec_pipe)) {
    const int err = errno;
    close_pipe(report_pipe);
    close_pipe(exec_pipe);
    return fail(ErrorCode::kUnavailable, "pipe: " + std::generic_category().message(err));
  }
  args.report_fd = report_pipe[1];
  args.exec_read_fd = exec_pipe[0];
  args.exec_write_fd = exec_pipe[1];
  args.kept_fds = {args.report_fd, args.exec_read_fd, args.exec_write_fd};
  std::sort(args.kept_fds.begin(), args.kept_fds.end());

  const pid_t shim = ::fork();
  if (shim == 0) run_shim(args);
  const int fork_errno = errno;
  close_pipe(exec_pipe);
  ::close(report_pipe[1]);
  if (shim < 0) {
    ::close(report_pipe[0]);
    return fail(ErrorCode::kUnavailable, "fork: " + std::generic_category().message(fork_errno));
  }
  ShimReport message;
  const bool reported = read_all(report_pipe[0], &message, sizeof message);
  ::close(report_pipe[0]);
  Spawned spawned;
  spawned.shim_pid = shim;
  spawned.shim_reported = reported;
  if (reported) {
    spawned.workload_pid = message.workload_pid;
    spawned.start_errno = message.start_errno;
  }
  return spawned;
}

}  // namespace allot::agent
