#include "agent/runtime/dial.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "agent/runtime/command.h"
#include "agent/runtime/container_runtime.h"

namespace allot::agent {

Result<int> dial_loopback(int port) { return dial_address("127.0.0.1", port); }

Result<int> dial_address(const std::string& address, int port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
    return fail(ErrorCode::kInvalidArgument, "not an IPv4 address: " + address);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable, fmt::format("no socket: {}", std::strerror(errno)));
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(
        ErrorCode::kBadGateway,
        fmt::format("nothing answers on port {} of the instance: {}", port, std::strerror(error)));
  }
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

Result<int> dial_in_namespace(pid_t pid, int port) {
  const std::string path = fmt::format("/proc/{}/ns/net", pid);
  const int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0) return fail(ErrorCode::kNotFound, "the instance's container does not run");
  // A namespace is a thread's: a thread of its own enters it, makes the socket (which stays in
  // that namespace) and ends, so that no other thread of the agent ever leaves the node's.
  Result<int> out = fail(ErrorCode::kUnavailable, "the namespace could not be entered");
  std::thread entering([&] {
    if (::setns(ns, CLONE_NEWNET) != 0) {
      out = fail(ErrorCode::kUnavailable,
                 fmt::format("cannot enter the container's network: {}", std::strerror(errno)));
      return;
    }
    out = dial_loopback(port);
  });
  entering.join();
  ::close(ns);
  return out;
}

Result<pid_t> container_pid(const std::string& podman, const std::string& instance_id) {
  auto out =
      run_command({podman, "inspect", "--format", "{{.State.Pid}}", container_name(instance_id)},
                  std::chrono::seconds(20));
  if (!out) return std::unexpected(out.error());
  const std::string line = last_line(out->output);
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
  if (out->exit_code != 0 || ec != std::errc{} || end != line.data() + line.size() || pid <= 0) {
    return fail(ErrorCode::kNotFound, "the instance's container does not run");
  }
  return pid;
}

}  // namespace allot::agent
