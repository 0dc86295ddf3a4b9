#include "daemon/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

namespace allot {

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<DataDirLock> lock_data_dir(const std::string& dir) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  const std::string path = (std::filesystem::path(dir) / "allotd.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t got = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    return fail(
        ErrorCode::kConflict,
        fmt::format("another allotd (pid {}) uses the data dir {}: stop it first, or give "
                    "this one a --data-dir of its own",
                    got > 0 ? std::string(holder, static_cast<size_t>(got)) : "unknown", dir));
  }
  const std::string pid = std::to_string(::getpid());
  const bool written = ::ftruncate(fd, 0) == 0 &&
                       ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  if (!written) {
    ::close(fd);
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  return DataDirLock(fd);
}

Result<Sealer> open_secrets_key(const std::string& dir, bool store_is_new, bool make_new) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  const std::filesystem::path path = std::filesystem::path(dir) / "secrets.key";
  std::error_code seen;
  if (!store_is_new && !make_new && !std::filesystem::exists(path, seen)) {
    return fail(ErrorCode::kConflict,
                fmt::format("{} is missing, but the store holds data sealed with it: restore it "
                            "from a backup; if it is lost for good, start once with "
                            "--new-secrets-key (registry passwords must then be entered again)",
                            path.string()));
  }
  return Sealer::open_key_file(path.string());
}

}  // namespace allot
