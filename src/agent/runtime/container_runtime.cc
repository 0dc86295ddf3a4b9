#include "agent/runtime/container_runtime.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "agent/runtime/cdi.h"
#include "agent/runtime/command.h"
#include "agent/runtime/dial.h"
#include "agent/runtime/spawn.h"
#include "agent/runtime/state_file.h"
#include "agent/runtime/tenant_network.h"
#include "common/base64.h"
#include "common/environment.h"
#include "common/image_ref.h"
#include "common/int128.h"
#include "common/limits.h"

namespace allot::agent {
namespace {

using namespace std::chrono_literals;

constexpr auto kCommandTimeout = 30s;
constexpr size_t kMaxHostnameBytes = 63;
// Pulls the image, then runs the container as the image's user, or as an unprivileged one when
// the image names none or names root. An image from a registry is pulled at every start, with the
// tenant's own credential (or none), even when the node has it: the registry, not the node's
// cache, decides whether this tenant may have it (layers already here are not fetched again).
// Images named localhost/... are the node's own (made by the operator) and are never pulled.
// podman's account of the pull goes to a file the agent reads for the instance's progress; on a
// failure its last lines, ending with podman's "Error: " line, go to the instance's log. The
// credential file is removed once the pull is done. Fixed text: the image and every
// argument arrive as positional parameters.
constexpr std::string_view kStartScript = R"(p=$1; img=$2; shift 2
case "$img" in
  localhost/*) ;;
  *) "$p" pull "$img" >"$ALLOT_PULL_LOG" 2>&1 || { tail -n 3 "$ALLOT_PULL_LOG" >&2; exit 125; } ;;
esac
rm -f "$REGISTRY_AUTH_FILE"; unset REGISTRY_AUTH_FILE
: >"$ALLOT_PULLED"
u=$("$p" image inspect --format '{{.Config.User}}' "$img") || exit 125
n=${u%%:*}; while [ "${n#0}" != "$n" ]; do n=${n#0}; done
case "$n" in ""|root) u=65534:65534;; esac
exec "$p" run --user "$u" "$@"
)";
// podman's own exit codes: it failed (125), the command could not be run (126) or found (127).
constexpr int kPodmanFailed = 125;
constexpr int kCommandNotFound = 127;

// podman's default RLIMIT_NOFILE and RLIMIT_NPROC can be above what the agent may set, and then
// no container starts: open files get the agent's own hard limit, processes the pids limit (more
// could never run), each capped by that hard limit.
std::vector<std::string> ulimits(int64_t pids_limit) {
  constexpr rlim_t kMaxOpenFiles = 1 << 20;
  std::vector<std::string> args;
  for (const auto& [name, resource, wanted] :
       {std::tuple{"nofile", RLIMIT_NOFILE, kMaxOpenFiles},
        std::tuple{"nproc", RLIMIT_NPROC, static_cast<rlim_t>(pids_limit)}}) {
    rlimit limit{};
    if (::getrlimit(resource, &limit) != 0) continue;
    const rlim_t value = std::min(wanted, limit.rlim_max);
    args.emplace_back("--ulimit");
    args.push_back(fmt::format("{}={}:{}", name, value, value));
  }
  return args;
}

std::string join(const std::vector<std::string>& parts) {
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : ",") + part;
  return joined;
}

// What the container's environment holds: the tenant's variables and Allot's own, which the
// tenant cannot override. Written to a file readable by root alone, never on a command line.
Result<std::string> env_file_text(const WorkloadSpec& spec) {
  // A line break in a name or value would start a variable of its own in the file.
  if (auto ok = check_environment(spec.env); !ok) return std::unexpected(ok.error());
  std::map<std::string, std::string> env = {{"HOME", "/tmp"}};
  for (const auto& [name, value] : spec.env) env[name] = value;
  env["ALLOT_INSTANCE_ID"] = spec.instance_id;
  env[std::string(kNoticeVariable)] = kContainerNoticeFile;
  env["ALLOT_GPU_UUIDS"] = join(spec.gpu_uuids);
  env["CUDA_VISIBLE_DEVICES"] = join(spec.gpu_uuids);
  env["NVIDIA_VISIBLE_DEVICES"] = spec.gpu_uuids.empty() ? "void" : join(spec.gpu_uuids);
  std::string text;
  for (const auto& [name, value] : env) {
    text.append(name).append("=").append(value).append("\n");
  }
  return text;
}

// Only the tenant's own credential, or none: never the node's (`podman login` on the node).
std::string auth_file_text(const ImageRef& ref, const WorkloadSpec& spec) {
  nlohmann::json auths = nlohmann::json::object();
  if (!spec.registry_username.empty()) {
    const std::string pair = spec.registry_username + ":" + spec.registry_password;
    auths[ref.registry] = {{"auth", base64_encode(pair)}};
  }
  return nlohmann::json{{"auths", auths}}.dump();
}

// What the container runtime keeps beside the process runtime's record: the tenant, in a file of
// the workload's directory so that a restarted agent knows whose network a container is on.
struct Extra {
  std::string tenant_id;
  bool running = false;  // Its container has run: nothing more to show of its start.
  bool cleaned = false;  // Its container has been removed since it ended.
};

std::string tenant_path(const WorkloadPaths& paths) { return paths.dir + "/tenant"; }
// Made by the start script once the image is on the node, and by podman once the container runs.
std::string pulled_path(const WorkloadPaths& paths) { return paths.dir + "/pulled"; }
std::string pid_path(const WorkloadPaths& paths) { return paths.dir + "/container.pid"; }
std::string env_path(const WorkloadPaths& paths) { return paths.dir + "/container.env"; }
std::string auth_path(const WorkloadPaths& paths) { return paths.dir + "/registry-auth.json"; }
std::string pull_log_path(const WorkloadPaths& paths) { return paths.dir + "/pull.log"; }

}  // namespace

std::string pull_progress(const std::string& pull_log) {
  std::ifstream in(pull_log);
  std::string line;
  int layers = 0;
  bool config = false;
  while (std::getline(in, line)) {
    layers += line.starts_with("Copying blob") ? 1 : 0;
    config |= line.starts_with("Copying config") || line.starts_with("Writing manifest");
  }
  if (config) return "pulling the image: storing it on the node";
  if (layers > 0) return fmt::format("pulling the image: copying layer {}", layers);
  return "pulling the image";
}

namespace {

class ContainerRuntime final : public Runtime {
 public:
  ContainerRuntime(std::string state_dir, const Clock& clock, ContainerOptions options,
                   std::unique_ptr<Runtime> processes)
      : state_dir_(std::move(state_dir)),
        clock_(clock),
        options_(std::move(options)),
        processes_(std::move(processes)),
        networks_(options_) {}

  std::string_view kind() const override { return "container"; }

  PortDialer dialer() const override {
    return [podman = options_.podman](const std::string& instance_id, int port) -> Result<int> {
      auto pid = container_pid(podman, instance_id);
      if (!pid) return std::unexpected(pid.error());
      return dial_in_namespace(*pid, port);
    };
  }

  std::vector<std::string> exec_argv(const std::string& instance_id,
                                     const std::vector<std::string>& argv,
                                     bool tty) const override {
    std::vector<std::string> out = {options_.podman, "exec", "--interactive"};
    if (tty) out.insert(out.end(), {"--tty", "--env", "TERM=xterm-256color"});
    out.push_back(container_name(instance_id));
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  Result<WorkloadStatus> start(const WorkloadSpec& spec) override {
    if (const Status valid = validate_spec(spec); !valid) return std::unexpected(valid.error());
    auto ref = parse_image_ref(spec.image);
    if (!ref) return std::unexpected(ref.error());
    for (const WorkloadStatus& known : processes_->poll()) {
      if (known.instance_id == spec.instance_id) return known;
    }
    auto env_text = env_file_text(spec);
    if (!env_text) return std::unexpected(env_text.error());
    auto network = networks_.ensure(spec.tenant_id);
    if (!network) return std::unexpected(network.error());
    if (Status opened = networks_.open_peers(spec.tenant_id, spec.instance_id, spec.gang_peers);
        !opened) {
      networks_.close_peers(spec.instance_id);
      return std::unexpected(opened.error());
    }

    const WorkloadPaths paths = workload_paths(state_dir_, spec.instance_id);
    if (paths.notice_dir.find(',') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "the agent's state directory must not hold ',': podman cannot mount it");
    }
    for (const VolumeBind& volume : spec.volumes) {
      if ((volume.source + volume.path).find(',') != std::string::npos) {
        return fail(ErrorCode::kInvalidArgument,
                    "volume " + volume.name + ": a path with ',' cannot be mounted");
      }
    }
    std::error_code ec;
    std::filesystem::create_directories(paths.dir, ec);
    if (ec)
      return fail(ErrorCode::kUnavailable, "cannot create " + paths.dir + ": " + ec.message());
    for (const auto& [path, text, mode] : {std::tuple{tenant_path(paths), spec.tenant_id, 0644},
                                           std::tuple{env_path(paths), *env_text, 0600}}) {
      if (Status written = write_file_atomically(path, path + ".tmp", text, mode); !written) {
        return std::unexpected(written.error());
      }
    }
    WorkloadSpec shim{.instance_id = spec.instance_id,
                      .argv = {"/bin/sh", "-c", std::string(kStartScript), "allot-start",
                               options_.podman, ref->full()},
                      .gpu_uuids = spec.gpu_uuids,
                      .run = spec.run,
                      // conmon keeps a container whose podman client was killed: the shim
                      // removes it when it ends the workload for its agent's absence.
                      .orphan_cleanup = {options_.podman, "rm", "-f", "--ignore", "--time", "0",
                                         container_name(spec.instance_id)}};
    const std::string auth = auth_path(paths);
    if (Status written =
            write_file_atomically(auth, auth + ".tmp", auth_file_text(*ref, spec), 0600);
        !written) {
      return std::unexpected(written.error());
    }
    shim.env["REGISTRY_AUTH_FILE"] = auth;
    shim.env["ALLOT_PULLED"] = pulled_path(paths);
    shim.env["ALLOT_PULL_LOG"] = pull_log_path(paths);
    for (const std::string& stale : {pulled_path(paths), pid_path(paths), pull_log_path(paths)}) {
      std::filesystem::remove(stale, ec);
    }
    if (!options_.registries_conf.empty()) {
      shim.env["CONTAINERS_REGISTRIES_CONF"] = options_.registries_conf;
    }
    WorkloadSpec named = spec;
    named.image = ref->full();
    shim.argv.emplace_back("--pidfile");
    shim.argv.push_back(pid_path(paths));
    for (std::string& arg :
         container_run_args(named, options_, *network, env_path(paths), paths.notice_dir)) {
      shim.argv.push_back(std::move(arg));
    }
    auto status = processes_->start(shim);
    if (!status) return status;
    extras_[spec.instance_id] = Extra{.tenant_id = spec.tenant_id};
    return status;
  }

  Status stop(std::string_view instance_id, std::chrono::milliseconds grace,
              const StopNotice& notice) override {
    // SIGTERM reaches `podman run`, which passes it to the container; after the grace the shim's
    // SIGKILL ends podman, and poll() then removes the container, killing what still runs. The
    // notice is the shim's, in the directory the container sees as kContainerNoticeDir.
    return processes_->stop(instance_id, grace, notice);
  }

  std::vector<WorkloadStatus> poll() override {
    std::vector<WorkloadStatus> statuses = processes_->poll();
    for (WorkloadStatus& status : statuses) {
      if (status.state == WorkloadState::kRunning) {
        show_progress(status);
        continue;
      }
      Extra& extra = extras_[status.instance_id];
      if (!extra.cleaned) {
        remove_container(status.instance_id);
        networks_.close_peers(status.instance_id);
        extra.cleaned = true;
      }
      explain_failure(status);
    }
    networks_.keep_only_busy(tenants_running(statuses), clock_.now_ms());
    return statuses;
  }

  // A tenant network no running container uses is removed now rather than after kIdleMs: the
  // next agent would find it only if it starts with this state directory.
  void close() override { networks_.release_all_but(tenants_running(processes_->poll())); }

  void forget(std::string_view instance_id) override {
    processes_->forget(instance_id);
    for (const WorkloadStatus& s : processes_->poll()) {
      if (s.instance_id == instance_id) return;  // Still running: the process runtime kept it.
    }
    const auto found = extras_.find(instance_id);
    if (found == extras_.end()) return;
    std::error_code ec;
    const WorkloadPaths paths = workload_paths(state_dir_, instance_id);
    for (const std::string& path : {tenant_path(paths), env_path(paths), auth_path(paths),
                                    pulled_path(paths), pid_path(paths), pull_log_path(paths)}) {
      std::filesystem::remove(path, ec);
    }
    extras_.erase(found);
  }

  // Takes up the tenants of workloads an earlier agent started, then removes what no workload
  // accounts for: containers left by a crash between podman starting them and the shim recording
  // them, or that outlived a podman client killed at a stop, and networks of tenants with no work.
  void adopt_existing() {
    const std::vector<WorkloadStatus> statuses = processes_->poll();
    for (const WorkloadStatus& s : statuses) {
      std::ifstream in(tenant_path(workload_paths(state_dir_, s.instance_id)));
      std::string tenant;
      std::getline(in, tenant);
      extras_[s.instance_id] = Extra{.tenant_id = tenant};
    }
    remove_strays(statuses);
    remove_gpu_holders();
    networks_.release_all_but(tenants_running(statuses));
    std::set<std::string> running;
    for (const WorkloadStatus& s : statuses) {
      if (s.state == WorkloadState::kRunning) running.insert(s.instance_id);
    }
    networks_.close_all_peers_but(running);
  }

  // Containers of another agent (an earlier one on this host with another state directory) that
  // hold one of this agent's GPUs: whatever they run, nobody accounts for it, and the GPU is
  // about to be offered.
  void remove_gpu_holders() {
    if (options_.node_gpu_uuids.empty()) return;
    auto listed = run_command({options_.podman, "ps", "-a", "--filter", "label=allot.instance",
                               "--format", "{{.Names}}\t{{.Labels}}"},
                              kCommandTimeout);
    if (!listed || listed->exit_code != 0) return;
    std::istringstream lines(listed->output);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos ||
          line.find("allot.owner:" + options_.owner) != std::string::npos)
        continue;
      const bool holds = std::ranges::any_of(options_.node_gpu_uuids, [&](const std::string& uuid) {
        return line.find(uuid, tab) != std::string::npos;
      });
      if (!holds) continue;
      spdlog::warn("msg=\"ending a container no agent accounts for\" container={}",
                   line.substr(0, tab));
      (void)run_command({options_.podman, "rm", "-f", "--time", "0", line.substr(0, tab)},
                        kCommandTimeout);
    }
  }

  void remove_strays(const std::vector<WorkloadStatus>& statuses) {
    std::set<std::string, std::less<>> running;
    for (const WorkloadStatus& s : statuses) {
      if (s.state == WorkloadState::kRunning) running.insert(container_name(s.instance_id));
    }
    auto listed = run_command({options_.podman, "ps", "-a", "--filter",
                               "label=allot.owner=" + options_.owner, "--format", "{{.Names}}"},
                              kCommandTimeout);
    if (!listed || listed->exit_code != 0) return;
    size_t begin = 0;
    const std::string& names = listed->output;
    while (begin < names.size()) {
      size_t end = names.find('\n', begin);
      if (end == std::string::npos) end = names.size();
      const std::string name = names.substr(begin, end - begin);
      begin = end + 1;
      if (!name.empty() && !running.contains(name)) {
        (void)run_command({options_.podman, "rm", "-f", "--time", "0", name}, kCommandTimeout);
      }
    }
  }

 private:
  // A workload runs once its container does: until then it is pulling or making the container.
  void show_progress(WorkloadStatus& status) {
    Extra& extra = extras_[status.instance_id];
    if (extra.running) return;
    const WorkloadPaths paths = workload_paths(state_dir_, status.instance_id);
    std::error_code ec;
    if (std::filesystem::exists(pid_path(paths), ec)) {
      extra.running = true;
      return;
    }
    status.state = WorkloadState::kStarting;
    status.message = std::filesystem::exists(pulled_path(paths), ec)
                         ? "starting the container"
                         : pull_progress(pull_log_path(paths));
  }

  std::set<std::string> tenants_running(const std::vector<WorkloadStatus>& statuses) const {
    std::set<std::string> tenants;
    for (const WorkloadStatus& s : statuses) {
      const auto extra = extras_.find(s.instance_id);
      const bool active = s.state == WorkloadState::kRunning || s.state == WorkloadState::kStarting;
      if (active && extra != extras_.end()) {
        tenants.insert(extra->second.tenant_id);
      }
    }
    return tenants;
  }

  void remove_container(std::string_view instance_id) {
    (void)run_command(
        {options_.podman, "rm", "-f", "--ignore", "--time", "0", container_name(instance_id)},
        kCommandTimeout);
  }

  // podman's failures end the shim's workload with its own exit codes and an "Error: " line:
  // those are failures to start (an image that cannot be pulled, a command not in the image),
  // told with podman's reason. A workload's own exit code 125 without that line stays an exit.
  void explain_failure(WorkloadStatus& status) const {
    if (status.state != WorkloadState::kExited || status.exit_code < kPodmanFailed ||
        status.exit_code > kCommandNotFound) {
      return;
    }
    std::ifstream in(status.log_path, std::ios::binary | std::ios::ate);
    const std::streamoff size = in.tellg();
    constexpr std::streamoff kTail = 4096;
    in.seekg(size > kTail ? size - kTail : 0);
    std::string tail(static_cast<size_t>(size > kTail ? kTail : std::max<std::streamoff>(size, 0)),
                     '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    const std::string line = last_line(tail);
    if (!line.starts_with("Error: ")) return;
    status.state = WorkloadState::kFailedToStart;
    status.message = line.substr(7, 500);
  }

  std::string state_dir_;
  const Clock& clock_;
  ContainerOptions options_;
  std::unique_ptr<Runtime> processes_;
  TenantNetworks networks_;
  std::map<std::string, Extra, std::less<>> extras_;
};

}  // namespace

std::string container_name(std::string_view instance_id) {
  return "allot-" + std::string(instance_id);
}

std::pair<int64_t, int64_t> container_limits(const WorkloadSpec& spec,
                                             const ContainerOptions& options) {
  constexpr int64_t kLeastCpuMilli = 100;
  constexpr int64_t kLeastMemoryMib = 256;
  // The share, in parts of the node's GPUs; a node without GPUs (or a spec without) gives all.
  const bool shared = options.node_gpu_milli > 0 && spec.gpu_milli > 0;
  auto share = [&](int64_t whole) {
    if (!shared) return whole;
    return static_cast<int64_t>(static_cast<Int128>(whole) *
                                std::min(spec.gpu_milli, options.node_gpu_milli) /
                                options.node_gpu_milli);
  };
  const int64_t cpu = spec.cpu_milli > 0 ? spec.cpu_milli : share(options.node_cpu_milli);
  const int64_t memory = spec.memory_mib > 0 ? spec.memory_mib : share(options.node_memory_mib);
  return {std::max(cpu, kLeastCpuMilli), std::max(memory, kLeastMemoryMib)};
}

std::vector<std::string> container_run_args(const WorkloadSpec& spec,
                                            const ContainerOptions& options,
                                            const std::string& network, const std::string& env_file,
                                            const std::string& notice_dir) {
  std::vector<std::string> args = {
      "--rm", "--pull", "never", "--name", container_name(spec.instance_id), "--label",
      "allot.instance=" + spec.instance_id, "--label", "allot.owner=" + options.owner, "--label",
      "allot.gpus=" + join(spec.gpu_uuids), "--hostname",
      spec.instance_id.substr(0, kMaxHostnameBytes), "--network", network,
      // No capabilities, no way to gain privileges, the runtime's default seccomp profile.
      "--cap-drop", "all", "--security-opt", "no-new-privileges",
      // Read-only image layers; the only writable place is a bounded /tmp in memory, owned by
      // the container's user (podman would otherwise give it the mode of the image's /tmp).
      "--read-only", "--read-only-tmpfs=false", "--mount",
      fmt::format("type=tmpfs,destination=/tmp,tmpfs-size={}m,tmpfs-mode=1777,U=true",
                  options.scratch_mib),
      // The one path of the node it sees: its own stop notice's directory, read-only.
      "--mount",
      fmt::format("type=bind,source={},destination={},ro=true", notice_dir, kContainerNoticeDir),
      "--workdir", "/tmp", "--pids-limit", std::to_string(options.pids_limit), "--env-file",
      env_file,
      // An init as PID 1: it reaps what the workload leaves and passes SIGTERM on, so that a
      // stop ends within its grace.
      "--init",
      // No IPv6 inside: the tenant networks' walls are IPv4's, and a link-local address would
      // reach the node around them.
      "--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "--sysctl",
      "net.ipv6.conf.default.disable_ipv6=1"};
  if (options.own_user_namespace) args.emplace_back("--userns=auto");
  if (!options.seccomp_profile.empty()) {
    args.emplace_back("--security-opt");
    args.push_back("seccomp=" + options.seccomp_profile);
  }
  for (std::string& limit : ulimits(options.pids_limit)) args.push_back(std::move(limit));
  const auto [cpu_milli, memory_mib] = container_limits(spec, options);
  args.emplace_back("--cpus");
  args.push_back(fmt::format("{}.{:03}", cpu_milli / 1000, cpu_milli % 1000));
  args.emplace_back("--memory");
  args.push_back(std::to_string(memory_mib) + "m");
  if (spec.gang_port > 0) {
    // The same numbers inside as outside, so that a member's address is the same to all.
    const std::string range =
        fmt::format("{}-{}", spec.gang_port, spec.gang_port + limits::kGangPortsPerMember - 1);
    args.emplace_back("--publish");
    args.push_back(range + ":" + range);
  }
  for (const VolumeBind& volume : spec.volumes) {
    args.emplace_back("--mount");
    args.push_back(fmt::format("type=bind,source={},destination={}{}", volume.source, volume.path,
                               volume.read_only ? ",ro=true" : ""));
  }
  for (const std::string& uuid : spec.gpu_uuids) {
    args.emplace_back("--device");
    args.push_back(cdi_device(options.cdi_kind, uuid));
  }
  args.push_back(spec.image);
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());
  return args;
}

Status probe_podman(const std::string& podman) {
  auto out = run_command({podman, "info", "--format", "{{.Host.OCIRuntime.Name}}"}, 60s);
  if (!out) return std::unexpected(out.error());
  if (out->exit_code != 0) {
    return fail(ErrorCode::kUnavailable,
                "podman cannot run containers here: " + last_line(out->output));
  }
  return {};
}

Result<std::string> write_registries_conf(const std::string& dir,
                                          const std::vector<std::string>& insecure_registries) {
  if (insecure_registries.empty()) return std::string();
  std::string text;
  for (const std::string& host : insecure_registries) {
    if (auto ref = parse_image_ref(host + "/x"); !ref || ref->registry != host) {
      return fail(ErrorCode::kInvalidArgument,
                  "--insecure-registry must be HOST[:PORT], not '" + host + "'");
    }
    text += fmt::format("[[registry]]\nlocation = \"{}\"\ninsecure = true\n\n", host);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
  std::string path = dir + "/registries.conf";
  if (Status written = write_file_atomically(path, path + ".tmp", text, 0644); !written) {
    return std::unexpected(written.error());
  }
  return path;
}

Result<std::unique_ptr<Runtime>> open_container_runtime(const std::string& state_dir,
                                                        const Clock& clock,
                                                        ContainerOptions options,
                                                        int64_t orphan_timeout_ms) {
  auto processes = open_process_runtime(state_dir, clock, orphan_timeout_ms);
  if (!processes) return std::unexpected(processes.error());
  auto runtime = std::make_unique<ContainerRuntime>(state_dir, clock, std::move(options),
                                                    std::move(*processes));
  runtime->adopt_existing();
  return std::unique_ptr<Runtime>(std::move(runtime));
}

}  // namespace allot::agent
