// The node agent: joins the controller, reports GPUs, telemetry and workloads, and runs the work
// the controller hands it, reconciling what runs with what should run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/gpu/gpu.h"
#include "agent/images.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/volumes.h"
#include "agent/tunnel.h"
#include "client/http_client.h"

namespace allot::agent {

struct AgentConfig {
  std::string server;      // http://HOST:PORT of allotd.
  std::string join_token;  // Needed only until the node has its own credential.
  std::string state_dir;   // Credential and workload state; survives restarts.
  std::string name;        // The node's name; default: the host name.
  std::string address;     // Where other nodes reach it; default: what allotd sees it join from.
  std::string region = "default";
  std::map<std::string, std::string> labels;
  int64_t cpu_milli = 0;   // Default: the host's CPUs.
  int64_t memory_mib = 0;  // Default: the host's memory.
  std::string runtime;     // The runtime's kind, told at join; a node keeps the one it joined with.
  // Why this node's GPUs cannot be given to isolated work (no NVIDIA CDI spec), told in every
  // report: the controller keeps them out of service while it is said.
  std::string gpu_problem;
  VolumeDirs volumes;  // Where the volumes its work mounts are kept.
};

class Agent {
 public:
  // `images` is the node's image store, for container nodes; null on process nodes.
  Agent(AgentConfig config, std::unique_ptr<GpuBackend> gpus, std::unique_ptr<Runtime> runtime,
        std::unique_ptr<ImageStore> images, const Clock& clock);

  // Joins (or reuses the saved credential) and serves until stop(). Returns the exit code: 0 after
  // stop(), 1 when the controller refuses the node's credential or it cannot be saved.
  int run();
  // Safe from a signal-handling thread.
  void stop();

 private:
  Status ensure_credential();
  // One report to the controller and the handling of its answer; false when refused.
  Result<bool> heartbeat();
  void apply_work(const nlohmann::json& work);
  nlohmann::json workload_reports(std::vector<WorkloadStatus>& statuses);
  nlohmann::json log_chunks(const std::vector<WorkloadStatus>& statuses);
  void release_shipped(const std::string& instance_id, const std::string& log_path,
                       int64_t shipped);
  void wait_loop();
  void wake();

  AgentConfig config_;
  std::unique_ptr<GpuBackend> gpus_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<ImageStore> images_;
  std::optional<nlohmann::json> unsent_listing_;  // An image listing no report has carried yet.
  const Clock& clock_;
  std::unique_ptr<HttpClient> client_;
  std::unique_ptr<Tunnel> tunnel_;  // Open once the node has its credential.
  std::string node_id_;
  std::string credential_;
  int64_t interval_ms_ = 2'000;
  std::map<std::string, int64_t> shipped_;            // Controller's log size per instance.
  std::map<std::string, int64_t> released_;           // Log bytes freed from the node's disk.
  std::map<std::string, std::string> last_reported_;  // Instance id -> last reported state.
  // Work the runtime refused to start (a bad image, a runtime failure), reported as failed to
  // start until the controller has recorded it.
  std::map<std::string, WorkloadStatus> refused_;

  std::mutex mutex_;
  std::condition_variable woken_;
  bool wake_ = false;  // Guarded by mutex_.
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> generation_{-1};
};

}  // namespace allot::agent
