#include "agent/runtime/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/document.h"

namespace allot::agent {
namespace {

using nlohmann::json;

constexpr int kRecordVersion = 1;

// POSIX reads: libstdc++'s streams throw when read(2) fails, and reading /proc/PID/stat of a
// process that is exiting fails with ESRCH. Here any failure reads as "nothing".
std::string read_whole_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

struct ProcStat {
  char state = '?';
  uint64_t start_ticks = 0;
};

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  const std::string text = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::vector<std::string> rest{std::istream_iterator<std::string>(fields),
                                std::istream_iterator<std::string>()};
  // rest[0] is field 3 (state); field 22 (starttime) is rest[19].
  if (rest.size() < 20 || rest[0].empty()) return std::nullopt;
  ProcStat stat;
  stat.state = rest[0][0];
  const std::string& start = rest[19];
  const auto [end, ec] =
      std::from_chars(start.data(), start.data() + start.size(), stat.start_ticks);
  if (ec != std::errc() || end != start.data() + start.size()) return std::nullopt;
  return stat;
}

}  // namespace

// Outside the unnamed namespace, where nlohmann finds them by argument-dependent lookup.
static std::optional<WorkloadState> parse_state(std::string_view name) {
  for (const auto state :
       {WorkloadState::kRunning, WorkloadState::kExited, WorkloadState::kFailedToStart}) {
    if (workload_state_name(state) == name) return state;
  }
  return std::nullopt;
}
static void to_json(json& doc, WorkloadState s) { doc = workload_state_name(s); }
static void from_json(const json& doc, WorkloadState& s) { read_name(doc, s, parse_state); }

// What a restarted agent needs to find its workload again. The image and its registry password
// are not kept: a workload that is found again is never started anew.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(VolumeBind, name, source, path, read_only)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadSpec, instance_id, argv, env, working_dir, gpu_uuids,
                                   cpu_milli, memory_mib)
// The instance is its spec's.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadStatus, state, pid, exit_code, signal, started_at_ms,
                                   ended_at_ms, log_path, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadRecord, spec, status, shim_pid, shim_start_ticks,
                                   pid_start_ticks, cgroup_dir, stop_requested, kill_at_ms)

WorkloadPaths workload_paths(const std::string& state_dir, std::string_view instance_id) {
  WorkloadPaths paths;
  paths.dir = state_dir + "/" + std::string(instance_id);
  paths.record = paths.dir + "/workload.json";
  paths.record_tmp = paths.dir + "/workload.json.tmp";
  paths.exit = paths.dir + "/exit";
  paths.exit_tmp = paths.dir + "/exit.tmp";
  paths.log = paths.dir + "/output.log";
  paths.work = paths.dir + "/work";
  paths.notice_dir = paths.dir + "/notice";
  paths.notice = paths.notice_dir + "/stop.json";
  return paths;
}

// POSIX calls rather than a stream, so that every failure is seen and the data reaches the disk
// before the rename makes it visible. The temporary file is created with its final mode (fchmod
// because the umask may narrow open's mode), so the contents are never readable by others.
Status write_file_atomically(const std::string& path, const std::string& tmp_path,
                             const std::string& contents, mode_t mode) {
  ::unlink(tmp_path.c_str());  // A leftover from a crash keeps its old mode through O_TRUNC.
  const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                "cannot write " + tmp_path + ": " + std::generic_category().message(errno));
  }
  size_t done = 0;
  int err = ::fchmod(fd, mode) == 0 ? 0 : errno;
  while (done < contents.size() && err == 0) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      err = errno;
    }
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp_path.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp_path.c_str());
    return fail(ErrorCode::kUnavailable,
                "cannot write " + path + ": " + std::generic_category().message(err));
  }
  return {};
}

Status save_record(const WorkloadPaths& paths, const WorkloadRecord& record) {
  json j = record;
  j["version"] = kRecordVersion;
  // Beside the spec: records written before runs and volumes have neither.
  j["run"] = record.spec.run;
  j["volumes"] = record.spec.volumes;
  return write_file_atomically(paths.record, paths.record_tmp, j.dump(2) + "\n", 0644);
}

std::optional<WorkloadRecord> load_record(const std::string& path) {
  const json j = json::parse(read_whole_file(path), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  // nlohmann reports missing fields and wrong types by throwing; they stay inside this function.
  try {
    if (j.at("version").get<int>() != kRecordVersion) return std::nullopt;
    auto record = j.get<WorkloadRecord>();
    record.status.instance_id = record.spec.instance_id;
    record.spec.run = j.value("run", 0);
    record.spec.volumes = j.value("volumes", std::vector<VolumeBind>{});
    return record;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<ExitOutcome> read_exit_file(const std::string& path) {
  std::istringstream in(read_whole_file(path));
  std::string word;
  int value = 0;
  if (!(in >> word >> value)) return std::nullopt;
  if (word == "exited") return ExitOutcome{ExitOutcome::Kind::kExited, value};
  if (word == "signal") return ExitOutcome{ExitOutcome::Kind::kSignaled, value};
  if (word == "failed") return ExitOutcome{ExitOutcome::Kind::kFailed, value};
  return std::nullopt;
}

uint64_t process_start_ticks(pid_t pid) {
  const auto stat = read_proc_stat(pid);
  return stat ? stat->start_ticks : 0;
}

bool process_alive(pid_t pid, uint64_t start_ticks) {
  if (start_ticks == 0) return false;
  const auto stat = read_proc_stat(pid);
  // A zombie has ended; only its parent's wait is missing ('X' is a dead task being removed).
  return stat && stat->start_ticks == start_ticks && stat->state != 'Z' && stat->state != 'X';
}

std::string_view workload_state_name(WorkloadState state) {
  switch (state) {
    case WorkloadState::kRunning:
      return "running";
    case WorkloadState::kExited:
      return "exited";
    case WorkloadState::kFailedToStart:
      return "failed_to_start";
    case WorkloadState::kStarting:
      return "starting";
  }
  return "running";
}

}  // namespace allot::agent
