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

std::optional<WorkloadState> parse_state(const std::string& name) {
  for (const auto state :
       {WorkloadState::kRunning, WorkloadState::kExited, WorkloadState::kFailedToStart}) {
    if (workload_state_name(state) == name) return state;
  }
  return std::nullopt;
}

json spec_to_json(const WorkloadSpec& spec) {
  return {{"instance_id", spec.instance_id},
          {"argv", spec.argv},
          {"env", spec.env},
          {"working_dir", spec.working_dir},
          {"gpu_uuids", spec.gpu_uuids},
          {"cpu_milli", spec.cpu_milli},
          {"memory_mib", spec.memory_mib}};
}

WorkloadSpec spec_from_json(const json& j) {
  WorkloadSpec spec;
  j.at("instance_id").get_to(spec.instance_id);
  j.at("argv").get_to(spec.argv);
  j.at("env").get_to(spec.env);
  j.at("working_dir").get_to(spec.working_dir);
  j.at("gpu_uuids").get_to(spec.gpu_uuids);
  j.at("cpu_milli").get_to(spec.cpu_milli);
  j.at("memory_mib").get_to(spec.memory_mib);
  return spec;
}

json status_to_json(const WorkloadStatus& status) {
  return {{"state", workload_state_name(status.state)},
          {"pid", status.pid},
          {"exit_code", status.exit_code},
          {"signal", status.signal},
          {"started_at_ms", status.started_at_ms},
          {"ended_at_ms", status.ended_at_ms},
          {"log_path", status.log_path},
          {"message", status.message}};
}

WorkloadStatus status_from_json(const json& j, const std::string& instance_id) {
  WorkloadStatus status;
  status.instance_id = instance_id;
  const auto state = parse_state(j.at("state").get<std::string>());
  if (!state) throw std::invalid_argument("unknown workload state");
  status.state = *state;
  j.at("pid").get_to(status.pid);
  j.at("exit_code").get_to(status.exit_code);
  j.at("signal").get_to(status.signal);
  j.at("started_at_ms").get_to(status.started_at_ms);
  j.at("ended_at_ms").get_to(status.ended_at_ms);
  j.at("log_path").get_to(status.log_path);
  j.at("message").get_to(status.message);
  return status;
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

WorkloadPaths workload_paths(const std::string& state_dir, std::string_view instance_id) {
  WorkloadPaths paths;
  paths.dir = state_dir + "/" + std::string(instance_id);
  paths.record = paths.dir + "/workload.json";
  paths.record_tmp = paths.dir + "/workload.json.tmp";
  paths.exit = paths.dir + "/exit";
  paths.exit_tmp = paths.dir + "/exit.tmp";
  paths.log = paths.dir + "/output.log";
  paths.work = paths.dir + "/work";
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
  const json j = {{"version", kRecordVersion},
                  {"spec", spec_to_json(record.spec)},
                  {"status", status_to_json(record.status)},
                  {"shim_pid", record.shim_pid},
                  {"shim_start_ticks", record.shim_start_ticks},
                  {"pid_start_ticks", record.pid_start_ticks},
                  {"cgroup_dir", record.cgroup_dir},
                  {"stop_requested", record.stop_requested},
                  {"kill_at_ms", record.kill_at_ms}};
  return write_file_atomically(paths.record, paths.record_tmp, j.dump(2) + "\n", 0644);
}

std::optional<WorkloadRecord> load_record(const std::string& path) {
  const json j = json::parse(read_whole_file(path), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  // nlohmann reports missing fields and wrong types by throwing; they stay inside this function.
  try {
    if (j.at("version").get<int>() != kRecordVersion) return std::nullopt;
    WorkloadRecord record;
    record.spec = spec_from_json(j.at("spec"));
    record.status = status_from_json(j.at("status"), record.spec.instance_id);
    j.at("shim_pid").get_to(record.shim_pid);
    j.at("shim_start_ticks").get_to(record.shim_start_ticks);
    j.at("pid_start_ticks").get_to(record.pid_start_ticks);
    j.at("cgroup_dir").get_to(record.cgroup_dir);
    j.at("stop_requested").get_to(record.stop_requested);
    j.at("kill_at_ms").get_to(record.kill_at_ms);
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
