// Runs workloads on a node. Two runtimes: containers (podman, the default; container_runtime.h),
// and processes on the host for single-tenant, trusted nodes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/runtime/dial.h"
#include "common/clock.h"
#include "common/error.h"

namespace allot::agent {

// A volume the workload mounts: a directory of the node, which the agent made, that a container
// sees at `path`. The process runtime mounts nothing: its workloads find `source` in the variable
// ALLOT_VOLUME_<NAME>, which containers have too, naming `path`.
struct VolumeBind {
  std::string name;
  std::string source;
  std::string path;
  bool read_only = false;

  bool operator==(const VolumeBind&) const = default;
};

struct WorkloadSpec {
  std::string instance_id;
  std::vector<std::string> argv;           // argv[0] is looked up in PATH.
  std::map<std::string, std::string> env;  // Added to a minimal base environment.
  std::string working_dir;                 // Empty: the runtime's own directory for the instance.
  std::vector<std::string> gpu_uuids;      // CUDA_VISIBLE_DEVICES, comma-joined, in this order.
  int64_t cpu_milli = 0;                   // 0: no CPU limit.
  int64_t memory_mib = 0;                  // 0: no memory limit.
  int64_t gpu_milli = 0;                   // Its share of GPUs: 1,000 per whole GPU.
  // For the container runtime; the process runtime runs argv on the host and ignores them.
  std::string image;      // An OCI image reference (common/image_ref.h).
  std::string tenant_id;  // Containers of one tenant share a network; tenants never do.
  // The credential for the image's registry, used for its pull only; empty: anonymous.
  std::string registry_username;
  std::string registry_password;
  // A gang member's ports: its container publishes limits::kGangPortsPerMember of them from
  // gang_port on the node (0: none), and may reach its peers' ("ADDRESS:PORT" each).
  int gang_port = 0;
  std::vector<std::string> gang_peers;
  // Which run of the instance this is (the controller's Instance::run): a requeued instance runs
  // again under the same id, and the agent reports each workload's run so that the controller
  // tells a run still in its grace from the next one.
  int run = 0;
  std::vector<VolumeBind> volumes;
  // What the shim runs after it has ended the workload for its agent's absence (empty: nothing):
  // the container runtime's removal of the container, which outlives its podman client.
  std::vector<std::string> orphan_cleanup;
};

// Why a workload is asked to stop. The runtime writes it, with the deadline of its SIGKILL, to the
// workload's stop notice file (ALLOT_STOP_NOTICE) before the SIGTERM: docs/api.md, "Stop notice".
struct StopNotice {
  std::string reason;   // "preempted", "stopped" or "ended" (the controller no longer runs it).
  std::string message;  // For people: what stopped it.
};

// The stop notice file's path inside a container, and the variable that names it everywhere.
inline constexpr std::string_view kContainerNoticeDir = "/run/allot";
inline constexpr std::string_view kContainerNoticeFile = "/run/allot/stop.json";
inline constexpr std::string_view kNoticeVariable = "ALLOT_STOP_NOTICE";

enum class WorkloadState {
  kRunning,
  // Started but not yet running its command: a container whose image is being pulled or whose
  // container is being made (message says which). Reported, never stored: the process runtime
  // keeps it as kRunning.
  kStarting,
  kExited,         // Ended by itself or by a signal; exit_code or signal says how.
  kFailedToStart,  // The command could not be executed (not found, not executable, bad dir).
};

// "running", "starting", "exited" or "failed_to_start": the names the agent protocol uses.
std::string_view workload_state_name(WorkloadState state);

struct WorkloadStatus {
  std::string instance_id;
  WorkloadState state = WorkloadState::kRunning;
  pid_t pid = 0;
  int exit_code = -1;  // For kExited by exit(); -1 otherwise.
  int signal = 0;      // For kExited by a signal.
  TimeMs started_at_ms = 0;
  TimeMs ended_at_ms = 0;
  std::string log_path;                // stdout and stderr, appended.
  std::vector<std::string> gpu_uuids;  // The GPUs it was given (its spec's).
  std::string message;                 // Why it failed to start, for people.
  int run = 0;                         // Its spec's.
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string_view kind() const = 0;

  // Starts a workload in its own process group and session. Starting an id that is already known
  // returns its current status and starts nothing.
  [[nodiscard]] virtual Result<WorkloadStatus> start(const WorkloadSpec& spec) = 0;

  // Asks a workload to stop: its stop notice written, then SIGTERM to its process group now,
  // SIGKILL once `grace` has passed (carried out by poll()). Asking again changes nothing unless
  // it brings the SIGKILL closer, when the notice is written again. Stopping an ended or unknown
  // workload does nothing. An error says only that the notice could not be written: the workload
  // is stopped all the same.
  virtual Status stop(std::string_view instance_id, std::chrono::milliseconds grace,
                      const StopNotice& notice) = 0;

  // Reaps ended workloads, sends due SIGKILLs, and returns every known workload's status.
  virtual std::vector<WorkloadStatus> poll() = 0;

  // Drops an ended workload from the state (its end has been reported). Its log file stays.
  virtual void forget(std::string_view instance_id) = 0;

  // The agent is stopping; its workloads live on. Lets go of what none of them needs.
  virtual void close() {}

  // How the node's tunnel reaches a port of one of its workloads; safe from any thread.
  virtual PortDialer dialer() const = 0;
  // What the node runs for an exec into a workload (`argv` inside it; a TTY session with `tty`).
  virtual std::vector<std::string> exec_argv(const std::string& instance_id,
                                             const std::vector<std::string>& argv,
                                             bool tty) const = 0;
};

// How long a workload runs on without its agent: the controller stops billing it at the node's
// last heartbeat, so after this long its shim stops it (SIGTERM, SIGKILL kOrphanGraceMs later).
// Far longer than an agent's restart, which kills nothing. 0: never.
inline constexpr int64_t kDefaultOrphanTimeoutMs = int64_t{10} * 60 * 1000;
inline constexpr int64_t kOrphanGraceMs = 10'000;

// A runtime whose state lives in `state_dir` (created if needed): workloads it started are
// re-adopted when a new runtime opens the same directory (an agent restart), and those that ended
// meanwhile report their real exit status. Workloads survive the agent for `orphan_timeout_ms`:
// the runtime marks the agent alive (the file agent.alive in `state_dir`) when it opens and while
// it is polled, and each workload's shim stops its workload once that mark is older than the
// timeout it was started with. None is left untracked.
// `address` is where its workloads serve: it dials their ports there and tells them so in
// ALLOT_HOST (several agents on one host each take a loopback address of their own, 127.0.0.N,
// so that their workloads' ports do not clash).
[[nodiscard]] Result<std::unique_ptr<Runtime>> open_process_runtime(
    const std::string& state_dir, const Clock& clock,
    int64_t orphan_timeout_ms = kDefaultOrphanTimeoutMs, std::string address = "127.0.0.1");

}  // namespace allot::agent
