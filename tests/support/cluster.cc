#include "support/cluster.h"

#include <signal.h>

#include <chrono>
#include <sstream>
#include <thread>

namespace allot::testing {

using nlohmann::json;

void ClusterTest::SetUp() {
  std::vector<std::string> args = {"--heartbeat-timeout-ms",  std::to_string(heartbeat_timeout_ms_),
                                   "--heartbeat-interval-ms", "300",
                                   "--stop-grace-ms",         "500"};
  args.insert(args.end(), extra_daemon_args_.begin(), extra_daemon_args_.end());
  daemon_.set_extra_args(args);
  ASSERT_TRUE(daemon_.start());
  join_token_ = operator_call("POST", "/v1/join-tokens", 201).value("token", "");
  const std::string op = daemon_.admin_key();
  auto send = [&](const std::string& path, const json& body) {
    return json::parse(daemon_.request("POST", path, body.dump(), op).body, nullptr, false);
  };
  const std::string tenant = send("/v1/tenants", {{"name", "acme"}}).value("id", "");
  project_id_ = send("/v1/projects", {{"name", "vision"}, {"tenant_id", tenant}}).value("id", "");
  const std::string user =
      send("/v1/users", {{"name", "Ann"}, {"email", "ann@acme"}, {"tenant_id", tenant}})
          .value("id", "");
  member_key_ = send("/v1/keys", {{"name", "k"}, {"user_id", user}}).value("secret", "");
  ASSERT_FALSE(member_key_.empty());
  if (free_prices_) daemon_.set_free_prices("default");
  for (size_t i = 0; i < agent_count_; ++i) {
    agents_.push_back(AgentProcess{.name = "node-" + std::to_string(i),
                                   .state_dir = dir_.path() / ("agent-" + std::to_string(i)),
                                   .faults = dir_.path() / ("faults-" + std::to_string(i))});
    start_agent(i);
  }
  ASSERT_TRUE(eventually([&] {
    int ready = 0;
    for (const json& node : nodes()) ready += node["state"] == "ready" ? 1 : 0;
    return ready == static_cast<int>(agent_count_);
  })) << nodes().dump();
}

void ClusterTest::TearDown() {
  // Workloads outlive their agents by design: stop them through the controller first, so that
  // the test leaves no process behind.
  auto unfinished = [&] {
    std::vector<std::string> ids;
    const ClientResponse list =
        daemon_.request("GET", "/v1/instances?limit=1000", "", daemon_.admin_key());
    const json answer = json::parse(list.body, nullptr, false);
    if (!answer.is_object()) return ids;
    for (const json& item : answer["items"]) {
      const std::string state = item.value("state", "");
      if (state == "starting" || state == "running" || state == "scheduled") {
        ids.push_back(item.value("id", ""));
      }
    }
    return ids;
  };
  for (const std::string& id : unfinished()) {
    (void)daemon_.request("POST", "/v1/instances/" + id + "/stop", "", daemon_.admin_key());
  }
  eventually([&] { return unfinished().empty(); });
  for (size_t i = 0; i < agents_.size(); ++i) kill_agent(i);
}

void ClusterTest::start_agent(size_t i) {
  AgentProcess& agent = agents_[i];
  std::vector<std::string> args = {"--server",    daemon_.url(), "--join-token",
                                   join_token_,   "--state-dir", agent.state_dir.string(),
                                   "--name",      agent.name,    "--simulate",
                                   "8xH100-80GB", "--faults",    agent.faults.string(),
                                   "--log-level", "warn"};
  args.insert(args.end(), extra_agent_args_.begin(), extra_agent_args_.end());
  if (own_addresses_) {
    args.emplace_back("--workload-address");
    args.push_back("127.0.0." + std::to_string(i + 2));
  }
  agent.pid =
      spawn_program(bin_dir() + "/src/agent/allot-agent", args, {"ALLOT_RUNTIME=" + runtime_},
                    dir_.path() / (agent.name + ".out"), dir_.path() / (agent.name + ".err"));
}

void ClusterTest::kill_agent(size_t i) { end_agent(i, SIGKILL); }

void ClusterTest::stop_agent(size_t i) { end_agent(i, SIGTERM); }

void ClusterTest::end_agent(size_t i, int signal) {
  if (agents_[i].pid <= 0) return;
  ::kill(agents_[i].pid, signal);
  wait_for_exit(agents_[i].pid, std::chrono::seconds(30));
  agents_[i].pid = -1;
}

json ClusterTest::call(const std::string& method, const std::string& target, const json& body,
                       int expected_status) {
  return call_with(member_key_, method, target, body.is_null() ? "" : body.dump(), expected_status);
}

json ClusterTest::as_operator(const std::string& method, const std::string& target,
                              const json& body, int expected_status) {
  return call_with(daemon_.admin_key(), method, target, body.is_null() ? "" : body.dump(),
                   expected_status);
}

json ClusterTest::operator_call(const std::string& method, const std::string& target,
                                int expected_status) {
  const std::string body = method == "POST" ? R"({"name": "test"})" : "";
  return call_with(daemon_.admin_key(), method, target, body, expected_status);
}

json ClusterTest::call_with(const std::string& key, const std::string& method,
                            const std::string& target, const std::string& body,
                            int expected_status) {
  const ClientResponse response = daemon_.request(method, target, body, key);
  EXPECT_EQ(response.status, expected_status) << method << " " << target << ": " << response.body;
  return json::parse(response.body, nullptr, false);
}

std::string ClusterTest::stranger_key() {
  const json tenant = as_operator("POST", "/v1/tenants", {{"name", "rival"}}, 201);
  const json user =
      as_operator("POST", "/v1/users",
                  {{"name", "Eve"}, {"email", "eve@rival"}, {"tenant_id", tenant["id"]}}, 201);
  return as_operator("POST", "/v1/keys", {{"name", "k"}, {"user_id", user["id"]}}, 201)["secret"];
}

std::string ClusterTest::launch(json body) {
  body["project_id"] = project_id_;
  return call("POST", "/v1/instances", body, 201).value("id", "");
}

json ClusterTest::instance(const std::string& id) {
  return call("GET", "/v1/instances/" + id, nullptr, 200);
}

std::string ClusterTest::logs(const std::string& id) {
  return call("GET", "/v1/instances/" + id + "/logs", nullptr, 200).value("data", "");
}

json ClusterTest::nodes() { return operator_call("GET", "/v1/nodes", 200)["items"]; }

RunResult ClusterTest::cli(const std::vector<std::string>& args, const std::string& key) {
  return run_program(bin_dir() + "/src/cli/allot", args,
                     {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
}

long ClusterTest::metric_sum(const std::string& name) {
  const std::string text = daemon_.request("GET", "/metrics", "", daemon_.admin_key()).body;
  std::istringstream lines(text);
  long sum = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + "{") || line.starts_with(name + " ")) {
      sum += std::stol(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

bool ClusterTest::eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

bool ClusterTest::instance_reaches(const std::string& id, const std::string& state) {
  return eventually([&] { return instance(id)["state"] == state; });
}

}  // namespace allot::testing
