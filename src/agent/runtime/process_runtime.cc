// The process runtime: workloads are processes started through shims (spawn.cc), tracked in
// files under the state directory (state_file.cc), so that a new agent re-adopts them.
#include "agent/runtime/process_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "agent/runtime/spawn.h"
#include "agent/runtime/state_file.h"

namespace allot::agent {
namespace {

constexpr std::string_view kLostMessage = "lost while the agent was down";
constexpr std::string_view kCgroupRoot = "/sys/fs/cgroup";

std::string start_failure(int err) {
  return "failed to start: " + std::generic_category().message(err);
}

// Signals the workload's whole process group. A pid of 0 or 1 would signal the agent's own group
// or every process, so it is never passed on.
void signal_group(pid_t pid, int sig) {
  if (pid > 1) ::kill(-pid, sig);
}

// The stop notice (docs/api.md, "Stop notice"): one line of JSON, replaced whole.
Status write_notice(const WorkloadPaths& paths, const StopNotice& notice, TimeMs kill_at_ms,
                    std::chrono::milliseconds grace) {
  const nlohmann::json text = {{"reason", notice.reason.empty() ? "stopped" : notice.reason},
                               {"message", notice.message},
                               {"deadline", format_time(kill_at_ms)},
                               {"deadline_ms", kill_at_ms},
                               {"grace_ms", std::max<int64_t>(grace.count(), 0)}};
  return write_file_atomically(paths.notice, paths.notice + ".tmp", text.dump() + "\n", 0644);
}

struct Tracked {
  WorkloadRecord record;
  WorkloadPaths paths;
};

// Not thread-safe: one agent thread drives it.
class ProcessRuntime final : public Runtime {
 public:
  ProcessRuntime(std::string state_dir, const Clock& clock, CgroupHost cgroups,
                 int64_t orphan_timeout_ms, std::string address)
      : state_dir_(std::move(state_dir)),
        clock_(clock),
        cgroups_(std::move(cgroups)),
        orphan_timeout_ms_(orphan_timeout_ms),
        address_(std::move(address)) {}

  std::string_view kind() const override { return "process"; }

  // Its workloads share the host's network, serving at the node's workload address.
  PortDialer dialer() const override {
    return
        [address = address_](const std::string&, int port) { return dial_address(address, port); };
  }
  // Its workloads are processes of the host: a command runs beside them, on the host.
  std::vector<std::string> exec_argv(const std::string&, const std::vector<std::string>& argv,
                                     bool) const override {
    return argv;
  }
  Result<WorkloadStatus> start(const WorkloadSpec& spec) override;
  Status stop(std::string_view instance_id, std::chrono::milliseconds grace,
              const StopNotice& notice) override;
  std::vector<WorkloadStatus> poll() override;
  void forget(std::string_view instance_id) override;

  // Takes up every workload recorded in the state directory (by an earlier agent).
  void adopt_existing();
  // Tells the shims' watchdogs that the agent is alive: touches agent.alive, at most once a
  // second.
  void mark_alive();

 private:
  void reap_shims();
  void refresh(Tracked& workload);
  void end(Tracked& workload, std::optional<ExitOutcome> outcome);
  void abandon(const Tracked& workload);

  std::string state_dir_;
  const Clock& clock_;
  CgroupHost cgroups_;
  int64_t orphan_timeout_ms_;
  std::string address_;
  TimeMs alive_marked_ms_ = 0;
  std::map<std::string, Tracked, std::less<>> workloads_;
  // Shims this object forked and has not waited for yet. Shims of an earlier agent are not its
  // children; their liveness is read from /proc instead.
  std::set<pid_t> unreaped_shims_;
};

Result<WorkloadStatus> ProcessRuntime::start(const WorkloadSpec& spec) {
  if (const Status valid = validate_spec(spec); !valid) return std::unexpected(valid.error());
  if (const auto known = workloads_.find(spec.instance_id); known != workloads_.end()) {
    refresh(known->second);
    return known->second.record.status;
  }
  Tracked workload;
  workload.paths = workload_paths(state_dir_, spec.instance_id);
  const WorkloadPaths& paths = workload.paths;
  std::error_code ec;
  for (const std::string* dir :
       {spec.working_dir.empty() ? &paths.work : &paths.dir, &paths.notice_dir}) {
    std::filesystem::create_directories(*dir, ec);
    if (ec) return fail(ErrorCode::kUnavailable, "cannot create " + *dir + ": " + ec.message());
  }
  // An exit file or stop notice left by a forgotten workload of the same id is not this one's.
  std::filesystem::remove(paths.exit, ec);
  std::filesystem::remove(paths.notice, ec);

  WorkloadRecord& record = workload.record;
  record.spec = spec;
  WorkloadStatus& status = record.status;
  status.instance_id = spec.instance_id;
  status.log_path = paths.log;
  if (spec.cpu_milli > 0 || spec.memory_mib > 0) {
    auto cgroup = cgroups_.create(spec.instance_id, spec.cpu_milli, spec.memory_mib);
    if (cgroup) {
      record.cgroup_dir = *std::move(cgroup);
    } else {
      status.message = "running without resource limits: " + cgroup.error().message;
    }
  }

  WorkloadSpec with_host = spec;
  with_host.env["ALLOT_HOST"] = address_;
  LaunchPlan plan = make_launch_plan(with_host, paths, record.cgroup_dir);
  plan.alive_path = agent_alive_path(state_dir_);
  plan.orphan_timeout_ms = orphan_timeout_ms_;
  const auto spawned = spawn_workload(plan);
  if (!spawned) {
    CgroupHost::remove(record.cgroup_dir);
    return std::unexpected(spawned.error());
  }
  unreaped_shims_.insert(spawned->shim_pid);
  status.pid = spawned->workload_pid;
  status.started_at_ms = clock_.now_ms();
  record.shim_pid = spawned->shim_pid;
  record.shim_start_ticks = process_start_ticks(spawned->shim_pid);
  record.pid_start_ticks = process_start_ticks(spawned->workload_pid);
  if (!spawned->shim_reported || spawned->start_errno != 0) {
    status.state = WorkloadState::kFailedToStart;
    status.ended_at_ms = status.started_at_ms;
    status.message = spawned->shim_reported
                         ? start_failure(spawned->start_errno)
                         : "failed to start: the shim ended before starting the workload";
    CgroupHost::remove(record.cgroup_dir);
  }
  if (const Status saved = save_record(paths, record); !saved) {
    abandon(workload);
    return std::unexpected(saved.error());
  }
  return workloads_.emplace(spec.instance_id, std::move(workload)).first->second.record.status;
}

// A workload without a record would be lost at the next agent restart, so it must not run.
void ProcessRuntime::abandon(const Tracked& workload) {
  const WorkloadRecord& record = workload.record;
  signal_group(record.status.pid, SIGKILL);
  // The shim ends promptly once its workload is killed; waiting keeps it from lingering.
  while (::waitpid(record.shim_pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  unreaped_shims_.erase(record.shim_pid);
  CgroupHost::remove(record.cgroup_dir);
}

Status ProcessRuntime::stop(std::string_view instance_id, std::chrono::milliseconds grace,
                            const StopNotice& notice) {
  const auto found = workloads_.find(instance_id);
  if (found == workloads_.end()) return {};
  Tracked& workload = found->second;
  refresh(workload);  // Never signal a group whose workload has ended: its pid may be reused.
  WorkloadRecord& record = workload.record;
  if (record.status.state != WorkloadState::kRunning) return {};
  const TimeMs kill_at_ms = clock_.now_ms() + std::max<int64_t>(grace.count(), 0);
  if (record.stop_requested && record.kill_at_ms <= kill_at_ms) return {};  // Already stopping.
  // Before the signal, so that a handler of SIGTERM finds it. A notice that cannot be written
  // does not hold the stop back.
  Status told = write_notice(workload.paths, notice, kill_at_ms, grace);
  if (!record.stop_requested) signal_group(record.status.pid, SIGTERM);
  record.stop_requested = true;
  record.kill_at_ms = kill_at_ms;
  // If this is not saved, an agent restarted now would only wait; the caller can stop again.
  (void)save_record(workload.paths, record);
  return told;
}

void ProcessRuntime::mark_alive() {
  const TimeMs now_ms = clock_.now_ms();
  if (alive_marked_ms_ != 0 && now_ms - alive_marked_ms_ < 1'000) return;
  alive_marked_ms_ = now_ms;
  const std::string path = agent_alive_path(state_dir_);
  if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);  // A new file's time is now. If it cannot be made, shims count on.
}

std::vector<WorkloadStatus> ProcessRuntime::poll() {
  mark_alive();
  reap_shims();
  std::vector<WorkloadStatus> statuses;
  statuses.reserve(workloads_.size());
  for (auto& [id, workload] : workloads_) {
    refresh(workload);
    statuses.push_back(workload.record.status);
    statuses.back().gpu_uuids = workload.record.spec.gpu_uuids;
    statuses.back().run = workload.record.spec.run;
  }
  return statuses;
}

void ProcessRuntime::forget(std::string_view instance_id) {
  const auto found = workloads_.find(instance_id);
  if (found == workloads_.end()) return;
  Tracked& workload = found->second;
  refresh(workload);
  if (workload.record.status.state == WorkloadState::kRunning) return;  // It would go untracked.
  std::error_code ec;
  for (const auto* path :
       {&workload.paths.record, &workload.paths.record_tmp, &workload.paths.exit,
        &workload.paths.exit_tmp, &workload.paths.notice, &workload.paths.notice_dir}) {
    std::filesystem::remove(*path, ec);  // The notice's directory goes once it is empty.
  }
  CgroupHost::remove(workload.record.cgroup_dir);
  workloads_.erase(found);  // Its shim, if still unreaped, is reaped by the next poll().
}

void ProcessRuntime::reap_shims() {
  for (auto it = unreaped_shims_.begin(); it != unreaped_shims_.end();) {
    const pid_t reaped = ::waitpid(*it, nullptr, WNOHANG);
    // ECHILD: someone else reaped it (SIGCHLD ignored); either way it is gone.
    if (reaped == *it || (reaped < 0 && errno == ECHILD)) {
      it = unreaped_shims_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProcessRuntime::refresh(Tracked& workload) {
  const WorkloadRecord& record = workload.record;
  if (record.status.state != WorkloadState::kRunning) return;
  auto outcome = read_exit_file(workload.paths.exit);
  if (!outcome) {
    // The shim outlives the workload until it has written the exit file, so a live shim means
    // the outcome is still to come. Without the shim (it was killed), the workload's own
    // liveness decides, and its end can no longer be known.
    const bool shim_alive = unreaped_shims_.contains(record.shim_pid) ||
                            process_alive(record.shim_pid, record.shim_start_ticks);
    if (shim_alive || process_alive(record.status.pid, record.pid_start_ticks)) {
      if (record.stop_requested && clock_.now_ms() >= record.kill_at_ms) {
        signal_group(record.status.pid, SIGKILL);
      }
      return;
    }
    outcome = read_exit_file(workload.paths.exit);  // Written just before the shim ended?
  }
  end(workload, outcome);
}

void ProcessRuntime::end(Tracked& workload, std::optional<ExitOutcome> outcome) {
  WorkloadStatus& status = workload.record.status;
  status.state = WorkloadState::kExited;
  status.exit_code = -1;
  status.signal = 0;
  status.ended_at_ms = clock_.now_ms();
  if (!outcome) {
    status.signal = SIGKILL;
    status.message = kLostMessage;
  } else if (outcome->kind == ExitOutcome::Kind::kExited) {
    status.exit_code = outcome->value;
  } else if (outcome->kind == ExitOutcome::Kind::kSignaled) {
    status.signal = outcome->value;
  } else {
    status.state = WorkloadState::kFailedToStart;
    status.message = start_failure(outcome->value);
  }
  CgroupHost::remove(workload.record.cgroup_dir);
  // If this is not saved, the next agent observes the same end again from the exit file.
  (void)save_record(workload.paths, workload.record);
}

void ProcessRuntime::adopt_existing() {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const std::string id = it->path().filename().string();
    WorkloadPaths paths = workload_paths(state_dir_, id);
    auto record = load_record(paths.record);
    // A directory without a readable record holds only a forgotten workload's log.
    if (!record || record->spec.instance_id != id) continue;
    workloads_.emplace(id, Tracked{*std::move(record), std::move(paths)});
  }
  for (auto& [id, workload] : workloads_) refresh(workload);
}

}  // namespace

Result<std::unique_ptr<Runtime>> open_process_runtime_with(const std::string& state_dir,
                                                           const Clock& clock, CgroupHost cgroups,
                                                           int64_t orphan_timeout_ms,
                                                           std::string address) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) {
    return fail(ErrorCode::kUnavailable, "cannot create " + state_dir + ": " + ec.message());
  }
  // A directory may exist and still refuse writes (permissions, a read-only mount).
  const std::string probe = state_dir + "/.write-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                state_dir + " is not writable: " + std::generic_category().message(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  auto runtime = std::make_unique<ProcessRuntime>(state_dir, clock, std::move(cgroups),
                                                  orphan_timeout_ms, std::move(address));
  runtime->mark_alive();  // Before anything else: the shims of a restarted agent see it back.
  runtime->adopt_existing();
  return std::unique_ptr<Runtime>(std::move(runtime));
}

Result<std::unique_ptr<Runtime>> open_process_runtime(const std::string& state_dir,
                                                      const Clock& clock, int64_t orphan_timeout_ms,
                                                      std::string address) {
  return open_process_runtime_with(state_dir, clock, CgroupHost::probe(std::string(kCgroupRoot)),
                                   orphan_timeout_ms, std::move(address));
}

}  // namespace allot::agent
