#include "agent/runtime/cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <system_error>

namespace allot::agent {
namespace {

// The cgroup CPU period: cpu.max is "<quota> <period>", and 1,000 milli-CPUs is one full CPU,
// that is a quota of one period.
constexpr int64_t kCpuPeriodMicros = 100000;
constexpr int64_t kCpuQuotaMicrosPerMilli = kCpuPeriodMicros / 1000;
constexpr int64_t kBytesPerMib = int64_t{1} << 20;

std::string errno_text(int err) { return std::generic_category().message(err); }

// cgroupfs takes each setting in a single write(); a stream could split or hide a failure.
Status write_setting(const std::string& path, const std::string& value) {
  // O_CREAT is harmless on cgroupfs, where the file exists, and lets tests use a plain directory.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(ErrorCode::kUnavailable, path + ": " + errno_text(errno));
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return fail(ErrorCode::kUnavailable, path + ": " + errno_text(n < 0 ? err : EIO));
  }
  return {};
}

std::set<std::string> read_words(const std::string& path) {
  std::ifstream in(path);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

bool cpu_and_memory_enabled(const std::string& subtree_control) {
  const auto enabled = read_words(subtree_control);
  return enabled.contains("cpu") && enabled.contains("memory");
}

// Enables cpu and memory for the children of `dir` unless they are already: a host that has
// enabled them may still refuse the write.
Status enable_controllers(const std::string& dir) {
  const std::string path = dir + "/cgroup.subtree_control";
  if (cpu_and_memory_enabled(path)) return {};
  if (const Status written = write_setting(path, "+cpu +memory"); !written) return written;
  if (cpu_and_memory_enabled(path)) return {};
  return fail(ErrorCode::kUnavailable, path + " does not enable cpu and memory");
}

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(ErrorCode::kUnavailable, "cannot create " + path + ": " + errno_text(errno));
  }
  return {};
}

}  // namespace

CgroupHost CgroupHost::probe(const std::string& root) {
  CgroupHost host;
  struct stat info{};
  if (::stat((root + "/cgroup.controllers").c_str(), &info) != 0) {
    host.unavailable_ = "no cgroup v2 hierarchy at " + root;
    return host;
  }
  const std::string slice = root + "/allot.slice";
  Status ready = make_dir(slice);
  if (ready) ready = enable_controllers(root);
  if (ready) ready = enable_controllers(slice);
  if (!ready) {
    host.unavailable_ = ready.error().message;
    return host;
  }
  host.slice_dir_ = slice;
  return host;
}

Result<std::string> CgroupHost::create(std::string_view instance_id, int64_t cpu_milli,
                                       int64_t memory_mib) const {
  if (slice_dir_.empty()) return fail(ErrorCode::kUnavailable, unavailable_);
  std::string dir = slice_dir_ + "/" + std::string(instance_id);
  if (const Status made = make_dir(dir); !made) return std::unexpected(made.error());
  Status set;
  if (cpu_milli > 0) {
    set = write_setting(dir + "/cpu.max", std::to_string(cpu_milli * kCpuQuotaMicrosPerMilli) +
                                              " " + std::to_string(kCpuPeriodMicros));
  }
  if (set && memory_mib > 0) {
    set = write_setting(dir + "/memory.max", std::to_string(memory_mib * kBytesPerMib));
  }
  if (!set) {
    remove(dir);
    return std::unexpected(set.error());
  }
  return dir;
}

void CgroupHost::remove(const std::string& dir) {
  if (!dir.empty()) ::rmdir(dir.c_str());
}

}  // namespace allot::agent
