// The container runtime: each workload is an OCI container that podman (rootful) runs, with its
// own filesystem, processes, user, network and exactly its GPUs as CDI devices. It is built on the
// process runtime: the shim's workload is `podman run` in the foreground (through a small start
// script that pulls the image first), so logs, exit codes, stop signals and re-adoption after an
// agent restart work as for processes. podman is driven by its CLI rather than its REST socket:
// the CLI needs no service running on the node, and a foreground `podman run` is a process the
// shim can wait for and signal, which the socket API would have to imitate.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/runtime/runtime.h"

namespace allot::agent {

struct ContainerOptions {
  std::string podman = "podman";
  std::string cdi_kind;      // The CDI kind of this node's GPUs (cdi.h).
  std::string owner;         // Labels this agent's containers, apart from other agents' on a host.
  bool deny_egress = false;  // Tenant networks are internal: no route out of the node.
  int64_t scratch_mib = 1024;  // The writable /tmp, in memory, counted in the memory limit.
  int64_t pids_limit = 4096;
  std::string firewall = "iptables";  // Empty: leave the host's firewall alone (tests only).
  // Registries pulled from over plain HTTP, HOST[:PORT] (a registry on the operator's network).
  std::vector<std::string> insecure_registries;
  // The registries.conf that says so (write_registries_conf); empty: the node's own.
  std::string registries_conf;
  // Each container in a user namespace of its own (userns.h); off only in tests of the flags.
  bool own_user_namespace = true;
  // The seccomp profile (seccomp.h); empty: podman's default.
  std::string seccomp_profile;
  // The node's CPUs, memory and GPUs (milli-GPUs), so that a workload that names no CPU or
  // memory limit gets its GPUs' share of the node's: never all of it.
  int64_t node_cpu_milli = 0;
  int64_t node_memory_mib = 0;
  int64_t node_gpu_milli = 0;
  // This agent's GPUs: a container of any agent that holds one of them and that this agent does
  // not know is ended when it starts, before the GPU is offered again. Real GPUs only: simulated
  // ones are every agent's own fiction, and several agents on one host simulate the same UUIDs.
  std::vector<std::string> node_gpu_uuids;
};

// The CPU (milli) and memory (MiB) limits of a workload: what it asked for, else its GPUs' share
// of the node's (its milli-GPUs over the node's), at least 100 milli-CPUs and 256 MiB; a node
// without GPUs gives its whole.
std::pair<int64_t, int64_t> container_limits(const WorkloadSpec& spec,
                                             const ContainerOptions& options);

// Writes DIR/registries.conf marking each of `insecure_registries` as reached over plain HTTP and
// returns its path; empty when there are none. kInvalidArgument for one that is not HOST[:PORT].
[[nodiscard]] Result<std::string> write_registries_conf(
    const std::string& dir, const std::vector<std::string>& insecure_registries);

// Fails with kUnavailable, saying why, when podman cannot run containers here.
[[nodiscard]] Status probe_podman(const std::string& podman);

// The arguments after `podman run --user USER` for a spec: confinement, limits, GPUs, labels,
// network, the environment file, the stop notice's directory (read-only at kContainerNoticeDir),
// then the image and the command. Exposed for tests.
std::vector<std::string> container_run_args(const WorkloadSpec& spec,
                                            const ContainerOptions& options,
                                            const std::string& network, const std::string& env_file,
                                            const std::string& notice_dir);

// How far an image's pull has got, from podman's account of it in the file `pull_log`: each
// layer's copy begins with a "Copying blob" line, and the config's copy follows the last layer.
std::string pull_progress(const std::string& pull_log);

// The container name of an instance: "allot-" + its id.
std::string container_name(std::string_view instance_id);

[[nodiscard]] Result<std::unique_ptr<Runtime>> open_container_runtime(
    const std::string& state_dir, const Clock& clock, ContainerOptions options,
    int64_t orphan_timeout_ms = kDefaultOrphanTimeoutMs);

}  // namespace allot::agent
