// allot-agent: one per GPU node. Wires the flags, the GPU backend and the runtime to the Agent.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "agent/runtime/cdi.h"
#include "agent/runtime/container_runtime.h"
#include "agent/runtime/seccomp.h"
#include "agent/runtime/tenant_network.h"
#include "agent/runtime/userns.h"
#include "common/signals.h"

namespace {

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

struct RuntimeFlags {
  std::string kind;  // "container", "process" or empty: containers where podman works.
  std::string workload_address = "127.0.0.1";  // The process runtime's (ALLOT_HOST).
  allot::agent::ContainerOptions container;
  std::string cdi_dir = "/var/run/cdi";
  std::string written_spec;  // The simulated GPUs' CDI spec, removed when the agent stops.
};

// The container runtime with this node's GPUs as CDI devices, or the process runtime when asked.
allot::Result<std::unique_ptr<allot::agent::Runtime>> open_runtime(
    RuntimeFlags& flags, allot::agent::AgentConfig& config, const allot::agent::GpuBackend& gpus,
    const allot::Clock& clock, int64_t orphan_timeout_ms) {
  using namespace allot::agent;
  const std::string dir = config.state_dir + "/workloads";
  if (flags.kind == "process") {
    return open_process_runtime(dir, clock, orphan_timeout_ms, flags.workload_address);
  }
  if (allot::Status podman = probe_podman(flags.container.podman); !podman) {
    return allot::fail(allot::ErrorCode::kUnavailable,
                       podman.error().message +
                           "\n(install podman and runc, or run a trusted single-tenant node with "
                           "--runtime process)");
  }
  if (const std::string clash = gang_port_clash("/proc/sys/net/ipv4/ip_local_port_range");
      !clash.empty()) {
    spdlog::warn("msg=\"gang ports at risk\" why=\"{}\"", clash);
  }
  // One agent's containers, spec and simulated devices, apart from another agent's on the host.
  flags.container.owner =
      fmt::format("{:016x}", std::hash<std::string>{}(std::filesystem::absolute(dir).string()));
  std::vector<std::string> uuids;
  for (const GpuInfo& gpu : gpus.gpus()) uuids.push_back(gpu.uuid);
  if (gpus.kind() == "simulated") {
    flags.container.cdi_kind = simulated_cdi_kind(flags.container.owner);
    if (allot::Status written =
            write_simulated_cdi(gpus.gpus(), config.state_dir + "/gpu-devices", flags.cdi_dir,
                                flags.container.cdi_kind, flags.container.owner);
        !written) {
      return std::unexpected(written.error());
    }
    flags.written_spec = simulated_cdi_path(flags.cdi_dir, flags.container.owner);
  } else {
    // Never all GPUs for want of a spec: without one the node joins, but its GPUs are out of
    // service (the controller shows why) until the spec is made and the agent restarted.
    flags.container.cdi_kind = kNvidiaCdiKind;
    if (allot::Status spec = check_nvidia_cdi(uuids, {"/etc/cdi", "/var/run/cdi"}); !spec) {
      config.gpu_problem = spec.error().message;
      spdlog::warn("msg=\"GPUs out of service\" why=\"{}\"", config.gpu_problem);
    }
    flags.container.node_gpu_uuids = uuids;
  }
  auto conf = write_registries_conf(dir, flags.container.insecure_registries);
  if (!conf) return std::unexpected(conf.error());
  flags.container.registries_conf = *conf;
  if (allot::Status ranges = ensure_container_id_ranges(); !ranges) {
    return std::unexpected(ranges.error());
  }
  auto seccomp = write_seccomp_profile(dir);
  if (!seccomp) return std::unexpected(seccomp.error());
  flags.container.seccomp_profile = *seccomp;
  flags.container.node_cpu_milli = config.cpu_milli;
  flags.container.node_memory_mib = config.memory_mib;
  flags.container.node_gpu_milli = static_cast<int64_t>(gpus.gpus().size()) * 1000;
  return open_container_runtime(dir, clock, flags.container, orphan_timeout_ms);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace allot::agent;
  const sigset_t set = allot::block_stop_signals();

  CLI::App app{"allot-agent: runs GPU work for an Allot controller"};
  AgentConfig config{.name = host_name()};
  std::string simulate, faults, log_level = "info";
  std::vector<std::string> labels;
  app.add_option("--server", config.server,
                 "controller URL, http://HOST:PORT, or its replicas' URLs separated by commas")
      ->required();
  app.add_option("--join-token", config.join_token, "join token (env ALLOT_JOIN_TOKEN)")
      ->envname("ALLOT_JOIN_TOKEN");
  app.add_option("--state-dir", config.state_dir, "credential and workload state")->required();
  app.add_option("--name", config.name, "node name (default: the host name)");
  app.add_option("--address", config.address,
                 "address other nodes reach this one at, for gangs (default: the address allotd "
                 "sees it join from)");
  app.add_option("--region", config.region, "region (default: default)");
  app.add_option("--volume-dir", config.volumes.local,
                 "where local volumes are kept (default: STATE_DIR/volumes)");
  app.add_option("--nfs-dir", config.volumes.nfs,
                 "where the region's NFS export is mounted, for nfs volumes (default: none)");
  app.add_option("--label", labels, "KEY=VALUE, repeatable");
  app.add_option("--cpus", config.cpu_milli, "CPUs to offer (default: all)");
  app.add_option("--memory-mib", config.memory_mib, "memory to offer (default: all)");
  app.add_option("--simulate", simulate, "simulated GPUs: COUNTxMODEL or a file of models");
  app.add_option("--faults", faults, "fault file for simulated GPUs (xid I CODE, lost I)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error");
  int64_t orphan_timeout_s = kDefaultOrphanTimeoutMs / 1000;
  app.add_option("--orphan-timeout-s", orphan_timeout_s,
                 "stop workloads after this long without the agent (default 600; 0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{365} * 24 * 3600));
  RuntimeFlags runtime_flags;
  app.add_option("--runtime", runtime_flags.kind,
                 "container (podman; the default) or process (trusted single-tenant nodes only)")
      ->envname("ALLOT_RUNTIME")
      ->check(CLI::IsMember({"container", "process"}));
  app.add_option("--workload-address", runtime_flags.workload_address,
                 "process runtime: the IPv4 address its workloads serve on, told them in "
                 "ALLOT_HOST (default 127.0.0.1; agents sharing a host take 127.0.0.2, ...)")
      ->check(CLI::ValidIPV4);
  app.add_option("--podman", runtime_flags.container.podman, "the podman program");
  app.add_option("--cdi-dir", runtime_flags.cdi_dir,
                 "where the simulated GPUs' CDI spec is written (default /var/run/cdi)");
  app.add_flag("--deny-egress", runtime_flags.container.deny_egress,
               "containers get no route out of the node");
  app.add_option("--scratch-mib", runtime_flags.container.scratch_mib,
                 "each container's writable /tmp, in MiB (default 1024)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--insecure-registry", runtime_flags.container.insecure_registries,
                 "HOST[:PORT] of a registry reached over plain HTTP, repeatable");
  app.add_option("--firewall", runtime_flags.container.firewall,
                 "iptables program for the tenant walls (default iptables)");
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_logger_mt("allot-agent");
  logger->set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(log_level));
  spdlog::set_default_logger(logger);

  for (const std::string& label : labels) {
    const size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "--label must be KEY=VALUE, not '%s'\n", label.c_str());
      return 2;
    }
    config.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  if (config.volumes.local.empty()) config.volumes.local = config.state_dir + "/volumes";
  config.cpu_milli =
      config.cpu_milli > 0 ? config.cpu_milli * 1000 : std::thread::hardware_concurrency() * 1000LL;
  if (config.memory_mib == 0) {
    config.memory_mib = sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE) / (1 << 20);
  }

  auto gpus = simulate.empty()
                  ? open_nvml_backend()
                  : open_simulated_backend(simulate, std::hash<std::string>{}(config.name), faults);
  if (!gpus) {
    std::fprintf(stderr, "no GPUs: %s (use --simulate COUNTxMODEL on machines without them)\n",
                 gpus.error().message.c_str());
    return 2;
  }
  allot::SystemClock clock;
  auto runtime = open_runtime(runtime_flags, config, **gpus, clock, orphan_timeout_s * 1000);
  if (!runtime) {
    std::fprintf(stderr, "%s\n", runtime.error().message.c_str());
    return 2;
  }
  config.runtime = std::string((*runtime)->kind());
  spdlog::info("msg=\"starting\" name={} backend={} runtime={} gpus={}", config.name,
               (*gpus)->kind(), config.runtime, (*gpus)->gpus().size());
  std::unique_ptr<ImageStore> images;
  if (config.runtime == "container") {
    images = std::make_unique<ImageStore>(
        ImageStoreOptions{.podman = runtime_flags.container.podman,
                          .registries_conf = runtime_flags.container.registries_conf,
                          .work_dir = config.state_dir + "/workloads"});
  }
  Agent agent(config, std::move(*gpus), std::move(*runtime), std::move(images), clock);
  std::thread signals([&agent, set] {
    allot::wait_for_stop_signal(set);
    agent.stop();
  });
  signals.detach();
  const int code = agent.run();
  if (!runtime_flags.written_spec.empty()) std::remove(runtime_flags.written_spec.c_str());
  // The long-poll thread may still sit in a request: end the process without running static
  // destructors under its feet. Workloads are not children of this process; they live on.
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  _exit(code);
}
