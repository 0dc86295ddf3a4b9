// A whole cluster for a test: allotd and N node agents, each a real process simulating 8 GPUs,
// with short heartbeat deadlines, plus a tenant with a project and a member who launches work.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {

struct AgentProcess {
  std::string name;
  std::filesystem::path state_dir;
  std::filesystem::path faults;  // The simulated GPUs' fault file.
  pid_t pid = -1;
};

class ClusterTest : public ::testing::Test {
 protected:
  static constexpr int kHeartbeatTimeoutMs = 2'000;
  // allotd's heartbeat timeout for this test: short, so that lost nodes are seen quickly.
  int heartbeat_timeout_ms_ = kHeartbeatTimeoutMs;

  void SetUp() override;
  void TearDown() override;

  // Starts (or restarts, with the same state) agent `i`.
  void start_agent(size_t i);
  // SIGKILL: the agent dies without a word; its workloads keep running.
  void kill_agent(size_t i);
  // SIGTERM, as an operator stops it, and waits for it to end.
  void stop_agent(size_t i);

  nlohmann::json call(const std::string& method, const std::string& target,
                      const nlohmann::json& body, int expected_status);
  // As the operator's admin key, with a body; operator_call sends {"name": "test"} to a POST.
  nlohmann::json as_operator(const std::string& method, const std::string& target,
                             const nlohmann::json& body, int expected_status);
  nlohmann::json operator_call(const std::string& method, const std::string& target,
                               int expected_status);
  // A key of a member of a second tenant, "rival" (made by this call).
  std::string stranger_key();
  // Launches as the member; returns the new instance's id.
  std::string launch(nlohmann::json body);
  nlohmann::json instance(const std::string& id);
  std::string logs(const std::string& id);
  nlohmann::json nodes();
  // Runs the allot CLI against the daemon with `key`.
  RunResult cli(const std::vector<std::string>& args, const std::string& key);
  // The sum of one /metrics series over its labels, e.g. allot_nodes.
  long metric_sum(const std::string& name);
  // Polls until `done` holds (true) or 30 s pass (false).
  bool eventually(const std::function<bool()>& done);
  bool instance_reaches(const std::string& id, const std::string& state);

  TempDir dir_;
  Daemon daemon_;
  std::string join_token_;
  std::string project_id_;
  std::string member_key_;
  std::vector<AgentProcess> agents_;
  size_t agent_count_ = 3;
  std::vector<std::string> extra_daemon_args_;  // Added to allotd's flags.
  std::vector<std::string> extra_agent_args_;   // Added to every agent's flags.
  // Each agent's workloads serve on a loopback address of their own (agent i: 127.0.0.i+2),
  // so that the same port on two nodes does not clash.
  bool own_addresses_ = false;
  std::string runtime_ = "process";  // The agents' --runtime (ALLOT_RUNTIME).
  // Every model of the agents' region "default" priced at 0 in every class (Daemon::
  // set_free_prices); tests about money turn it off and set their own prices.
  bool free_prices_ = true;

  // As call(), with another key.
  nlohmann::json call_with(const std::string& key, const std::string& method,
                           const std::string& target, const std::string& body, int expected_status);

 private:
  void end_agent(size_t i, int signal);
};

}  // namespace allot::testing
