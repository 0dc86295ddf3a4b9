#include "daemon/provider.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "daemon/process.h"

namespace allot {
namespace {

constexpr size_t kMaxRefBytes = 200;
constexpr int64_t kAgentStopGraceMs = 10'000;

std::vector<std::string> script_env(const ProviderCall& call) {
  const Pool& p = call.pool;
  return {"ALLOT_SERVER=" + call.server_url,
          "ALLOT_JOIN_TOKEN=" + call.join_token,
          "ALLOT_NODE_NAME=" + call.node.name,
          "ALLOT_POOL=" + p.name,
          "ALLOT_GPU_MODEL=" + p.gpu_model,
          "ALLOT_REGION=" + p.region,
          fmt::format("ALLOT_GPUS={}", p.gpus_per_node),
          fmt::format("ALLOT_CPU_MILLI={}", p.cpu_milli),
          fmt::format("ALLOT_MEMORY_MIB={}", p.memory_mib),
          "ALLOT_PROVIDER_REF=" + call.node.provider_ref};
}

// The last 200 bytes of what a script said on stderr, on one line.
std::string tail_of(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.size() <= kMaxRefBytes ? text : "..." + text.substr(text.size() - kMaxRefBytes);
}

Result<ScriptResult> run_checked(const std::string& what, const std::string& command,
                                 const ProviderCall& call, int64_t timeout_ms) {
  auto result = run_script(command, script_env(call), timeout_ms);
  if (!result) return result;
  if (result->timed_out) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("the {} command did not finish within {} s", what, timeout_ms / 1000));
  }
  if (result->exit_code != 0) {
    return fail(ErrorCode::kUnavailable, fmt::format("the {} command exited with {}: {}", what,
                                                     result->exit_code, tail_of(result->err)));
  }
  return result;
}

bool is_ref_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("._:/@-").find(c) != std::string_view::npos;
}

}  // namespace

Result<std::string> CommandProvider::create(const ProviderCall& call) {
  auto result = run_checked("create", call.pool.create_command, call, timeout_ms_);
  if (!result) return std::unexpected(result.error());
  std::string ref = result->out;
  while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r')) ref.pop_back();
  if (ref.empty()) return call.node.name;
  if (ref.size() > kMaxRefBytes || !std::all_of(ref.begin(), ref.end(), is_ref_char)) {
    return fail(ErrorCode::kInvalidArgument,
                "the create command printed something that is not one machine name");
  }
  return ref;
}

Status CommandProvider::remove(const ProviderCall& call) {
  auto result = run_checked("delete", call.pool.delete_command, call, timeout_ms_);
  if (!result) return std::unexpected(result.error());
  return {};
}

LocalProvider::~LocalProvider() {
  for (const auto& [name, pid] : agents_) {
    if (stop_program(pid, kAgentStopGraceMs)) {
      std::error_code ec;
      std::filesystem::remove(std::filesystem::path(root_) / name / "agent.pid", ec);
    }
  }
}

Result<std::string> LocalProvider::create(const ProviderCall& call) {
  const std::filesystem::path dir = std::filesystem::path(root_) / call.node.name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  }
  const Pool& p = call.pool;
  auto pid =
      start_program({agent_path_, "--server", call.server_url, "--join-token", call.join_token,
                     "--state-dir", (dir / "state").string(), "--name", call.node.name, "--region",
                     p.region, "--simulate", fmt::format("{}x{}", p.gpus_per_node, p.gpu_model),
                     "--cpus", std::to_string(std::max<int64_t>(1, p.cpu_milli / 1000)),
                     "--memory-mib", std::to_string(p.memory_mib), "--log-level", "warn"},
                    (dir / "agent.out").string(), (dir / "agent.err").string());
  if (!pid) return std::unexpected(pid.error());
  std::ofstream(dir / "agent.pid") << *pid << "\n";
  const std::lock_guard lock(mutex_);
  agents_[call.node.name] = *pid;
  return fmt::format("local:{}", *pid);
}

Status LocalProvider::remove(const ProviderCall& call) {
  pid_t pid = -1;
  {
    const std::lock_guard lock(mutex_);
    if (auto it = agents_.find(call.node.name); it != agents_.end()) {
      pid = it->second;
      agents_.erase(it);
    }
  }
  if (pid <= 0) {
    // Started before a restart of allotd: its pid file says which.
    std::ifstream in(std::filesystem::path(root_) / call.node.name / "agent.pid");
    if (!(in >> pid)) return {};  // Never started: nothing to remove.
  }
  if (!stop_program(pid, kAgentStopGraceMs)) {
    return fail(ErrorCode::kUnavailable, fmt::format("agent {} does not stop", pid));
  }
  return {};
}

}  // namespace allot
