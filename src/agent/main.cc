// allot-agent: one per GPU node. Wires the flags, the GPU backend and the runtime to the Agent.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "common/signals.h"

namespace {

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace allot::agent;
  const sigset_t set = allot::block_stop_signals();

  CLI::App app{"allot-agent: runs GPU work for an Allot controller"};
  AgentConfig config{.name = host_name()};
  std::string simulate, faults, log_level = "info";
  std::vector<std::string> labels;
  app.add_option("--server", config.server, "controller URL, http://HOST:PORT")->required();
  app.add_option("--join-token", config.join_token, "join token (env ALLOT_JOIN_TOKEN)")
      ->envname("ALLOT_JOIN_TOKEN");
  app.add_option("--state-dir", config.state_dir, "credential and workload state")->required();
  app.add_option("--name", config.name, "node name (default: the host name)");
  app.add_option("--region", config.region, "region (default: default)");
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
  auto runtime =
      open_process_runtime(config.state_dir + "/workloads", clock, orphan_timeout_s * 1000);
  if (!runtime) {
    std::fprintf(stderr, "%s\n", runtime.error().message.c_str());
    return 2;
  }
  spdlog::info("msg=\"starting\" name={} backend={} gpus={}", config.name, (*gpus)->kind(),
               (*gpus)->gpus().size());
  Agent agent(config, std::move(*gpus), std::move(*runtime), clock);
  std::thread signals([&agent, set] {
    allot::wait_for_stop_signal(set);
    agent.stop();
  });
  signals.detach();
  const int code = agent.run();
  // The long-poll thread may still sit in a request: end the process without running static
  // destructors under its feet. Workloads are not children of this process; they live on.
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  _exit(code);
}
