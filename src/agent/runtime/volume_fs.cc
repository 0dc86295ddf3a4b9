#include "agent/runtime/volume_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "agent/runtime/command.h"

namespace allot::agent {
namespace {

using namespace std::chrono_literals;

// Whether `dir` is a mount point: on another device than its parent.
bool mounted(const std::string& dir) {
  struct stat self{};
  struct stat parent{};
  const std::string up = std::filesystem::path(dir).parent_path().string();
  return ::stat(dir.c_str(), &self) == 0 && ::stat(up.c_str(), &parent) == 0 &&
         self.st_dev != parent.st_dev;
}

Status make_image(const std::string& image, int64_t size_gb) {
  const int fd = ::open(image.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                "cannot make " + image + ": " + std::string(std::strerror(errno)));
  }
  const bool sized = ::ftruncate(fd, size_gb * 1'000'000'000) == 0;
  ::close(fd);
  // No blocks kept back for root, and the root directory open to the volume's users.
  auto made = sized ? run_command({"mkfs.ext4", "-q", "-F", "-m", "0", image}, 120s)
                    : Result<CommandOutput>(fail(ErrorCode::kUnavailable, "cannot size it"));
  if (!made || made->exit_code != 0) {
    std::error_code ec;
    std::filesystem::remove(image, ec);
    return fail(ErrorCode::kUnavailable,
                "cannot make the file system of " + image + ": " +
                    (made ? last_line(made->output) : made.error().message));
  }
  return {};
}

}  // namespace

Status mount_volume_fs(const std::string& dir, int64_t size_gb) {
  if (size_gb <= 0 || mounted(dir)) return {};
  const std::string image = dir + ".ext4";
  std::error_code ec;
  if (!std::filesystem::exists(image, ec)) {
    // A volume written before its size was enforced keeps its data where it is: a file system
    // mounted over it would hide it.
    if (!std::filesystem::is_empty(dir, ec)) return {};
    if (Status made = make_image(image, size_gb); !made) return made;
  }
  auto mount = run_command({"mount", "-o", "loop,nosuid,nodev", image, dir}, 60s);
  if (!mount || mount->exit_code != 0) {
    return fail(ErrorCode::kUnavailable,
                "cannot mount the volume's file system at " + dir + ": " +
                    (mount ? last_line(mount->output) : mount.error().message));
  }
  return {};
}

}  // namespace allot::agent
