// Turning a WorkloadSpec into a LaunchPlan: validation, environment, PATH search candidates.
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "agent/runtime/spawn.h"
#include "common/environment.h"

namespace allot::agent {
namespace {

// The instance id names a directory (and a cgroup), so it is kept to a safe alphabet.
constexpr size_t kMaxInstanceIdBytes = 128;
constexpr int64_t kBytesPerMib = int64_t{1} << 20;
constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool valid_instance_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxInstanceIdBytes || id == "." || id == "..") return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

// The files execvp would try for `program`, in order. Searching here, before fork, keeps the
// workload's side to execve, which is async-signal-safe where execvp is not guaranteed to be.
std::vector<std::string> exec_candidates(const std::string& program, std::string_view path) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> candidates;
  size_t begin = 0;
  while (true) {
    const size_t end = path.find(':', begin);
    std::string_view dir =
        path.substr(begin, end == std::string_view::npos ? path.npos : end - begin);
    if (dir.empty()) dir = ".";  // An empty PATH entry means the current directory.
    candidates.push_back(std::string(dir) + "/" + program);
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return candidates;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string joined;
  for (const auto& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

}  // namespace

Status validate_spec(const WorkloadSpec& spec) {
  if (!valid_instance_id(spec.instance_id)) {
    return fail(ErrorCode::kInvalidArgument,
                "instance_id must be 1 to 128 letters, digits, '.', '_' or '-'");
  }
  if (spec.argv.empty() || spec.argv.front().empty()) {
    return fail(ErrorCode::kInvalidArgument, "argv must name a program to run");
  }
  for (const auto& arg : spec.argv) {
    if (has_nul(arg)) return fail(ErrorCode::kInvalidArgument, "argv must not hold NUL bytes");
  }
  if (auto ok = check_environment(spec.env); !ok) return ok;
  for (const auto& uuid : spec.gpu_uuids) {
    if (uuid.empty() || uuid.find(',') != std::string::npos || has_nul(uuid)) {
      return fail(ErrorCode::kInvalidArgument, "GPU UUIDs must be non-empty, without ','");
    }
  }
  if (has_nul(spec.working_dir)) {
    return fail(ErrorCode::kInvalidArgument, "working_dir must not hold NUL bytes");
  }
  if (spec.cpu_milli < 0 || spec.memory_mib < 0 ||
      spec.memory_mib > std::numeric_limits<int64_t>::max() / kBytesPerMib ||
      spec.cpu_milli > std::numeric_limits<int64_t>::max() / 100) {
    return fail(ErrorCode::kInvalidArgument, "cpu_milli and memory_mib must be 0 or positive");
  }
  return {};
}

std::string agent_alive_path(const std::string& state_dir) { return state_dir + "/agent.alive"; }

LaunchPlan make_launch_plan(const WorkloadSpec& spec, const WorkloadPaths& paths,
                            const std::string& cgroup_dir) {
  LaunchPlan plan;
  plan.work_dir = spec.working_dir.empty() ? paths.work : spec.working_dir;
  // HOME is the working directory, so that caches the workload writes there stay with it.
  std::map<std::string, std::string> env = {
      {"PATH", std::string(kDefaultPath)}, {"HOME", plan.work_dir}, {"LANG", "C.UTF-8"}};
  for (const auto& [name, value] : spec.env) env[name] = value;
  // The GPUs are the runtime's to assign: set even when empty, which hides every GPU.
  env["CUDA_VISIBLE_DEVICES"] = join(spec.gpu_uuids, ",");
  env["ALLOT_INSTANCE_ID"] = spec.instance_id;
  env[std::string(kNoticeVariable)] = paths.notice;
  for (const auto& [name, value] : env) {
    std::string entry = name;
    entry += '=';
    entry += value;
    plan.envp.push_back(std::move(entry));
  }

  plan.exec_paths = exec_candidates(spec.argv.front(), env["PATH"]);
  plan.argv = spec.argv;
  if (!spec.orphan_cleanup.empty()) {
    // The shim cannot search PATH after its fork: the first candidate that can run is taken.
    plan.orphan_cleanup = spec.orphan_cleanup;
    for (const std::string& candidate : exec_candidates(spec.orphan_cleanup.front(), env["PATH"])) {
      if (::access(candidate.c_str(), X_OK) == 0) {
        plan.orphan_cleanup.front() = candidate;
        break;
      }
    }
  }
  plan.log_path = paths.log;
  plan.exit_path = paths.exit;
  plan.exit_tmp_path = paths.exit_tmp;
  plan.cgroup_dir = cgroup_dir;
  return plan;
}

}  // namespace allot::agent
