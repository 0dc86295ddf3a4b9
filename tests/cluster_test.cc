// allotd and three agents, each simulating 8 GPUs, as separate processes: isolation of GPUs,
// node loss and return, XIDs, drain, and bad requests from tenants and agents.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

std::string joined(const json& uuids) {
  std::string out;
  for (const json& uuid : uuids) out += (out.empty() ? "" : ",") + uuid.get<std::string>();
  return out;
}

// The cell of a table's row (the line that holds `row_key`) in the column headed `header`.
std::string cell_of(const std::string& table, const std::string& row_key,
                    const std::string& header) {
  std::istringstream lines(table);
  std::string line;
  size_t column = std::string::npos;
  while (std::getline(lines, line)) {
    if (column == std::string::npos) column = line.find(header);
    if (column == std::string::npos || line.find(row_key) == std::string::npos) continue;
    if (line.size() <= column) return "";
    return line.substr(column, line.find(' ', column) - column);
  }
  return "";
}

json node_named(const json& nodes, const std::string& id) {
  for (const json& node : nodes) {
    if (node["id"] == id) return node;
  }
  return nullptr;
}

TEST_F(ClusterTest, EachWorkloadSeesExactlyItsOwnGpus) {
  std::vector<std::string> ids;
  ids.reserve(6);
  for (int i = 0; i < 6; ++i) {
    ids.push_back(launch({{"gpus", 4},
                          {"gpu_models", {"H100"}},
                          {"interactive", true},
                          {"command", {"sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\"; sleep 60"}}}));
  }
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    ASSERT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
    ASSERT_TRUE(eventually([&] { return !logs(id).empty(); }));
    const json got = instance(id);
    ASSERT_EQ(got["gpu_uuids"].size(), 4u);
    EXPECT_EQ(logs(id), joined(got["gpu_uuids"]) + "\n");
    for (const json& uuid : got["gpu_uuids"]) {
      EXPECT_TRUE(seen.insert(uuid.get<std::string>()).second) << uuid << " is shared";
    }
  }
  EXPECT_EQ(seen.size(), 24u);
  // The cluster is full: one more waits, and says why.
  const std::string waiting = launch({{"gpus", 1}, {"command", {"true"}}});
  EXPECT_EQ(instance(waiting)["state"], "queued");
  EXPECT_FALSE(instance(waiting).value("reason", "").empty()) << instance(waiting).dump();
  // Stopping one frees its GPUs and the waiting one starts there.
  call("POST", "/v1/instances/" + ids[0] + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(ids[0], "stopped"));
  ASSERT_TRUE(instance_reaches(waiting, "succeeded")) << instance(waiting).dump();
  EXPECT_EQ(instance(waiting)["node_id"], instance(ids[0])["node_id"]);
}

TEST_F(ClusterTest, SimulatedGpusReadIdleWhenFreeAndBusyWhileWorkHoldsThem) {
  const std::string id = launch({{"gpus", 2}, {"interactive", true}, {"command", {"sleep", "60"}}});
  ASSERT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
  const json got = instance(id);
  const std::set<std::string> held{got["gpu_uuids"][0].get<std::string>(),
                                   got["gpu_uuids"][1].get<std::string>()};
  // Once a heartbeat after the start has come in, the held GPUs run and every other one idles.
  const auto readings_agree = [&] {
    int busy = 0;
    int idle = 0;
    for (const json& node : nodes()) {
      for (const json& gpu : node["gpus"]) {
        const bool is_held = held.contains(gpu["uuid"].get<std::string>());
        const int pct = gpu["utilization_pct"];
        if (is_held && pct >= 55 && gpu["memory_used_bytes"] > 0) ++busy;
        if (!is_held && pct == 0 && gpu["memory_used_bytes"] == 0) ++idle;
      }
    }
    return busy == 2 && idle == 22;
  };
  ASSERT_TRUE(eventually(readings_agree)) << nodes().dump();
  // When the work stops, its GPUs go back to idle.
  call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id, "stopped"));
  ASSERT_TRUE(eventually([&] {
    for (const json& node : nodes()) {
      for (const json& gpu : node["gpus"]) {
        if (gpu["utilization_pct"] != 0) return false;
      }
    }
    return true;
  })) << nodes().dump();
}

TEST_F(ClusterTest, AKilledAgentsNodeIsLostWithItsWorkAndComesBackWithoutADuplicate) {
  const std::string id = launch({{"gpus", 8}, {"command", {"sh", "-c", "echo $$; sleep 600"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  ASSERT_TRUE(eventually([&] { return !logs(id).empty(); }));
  const int workload_pid = std::stoi(logs(id));
  const std::string node_id = instance(id)["node_id"];
  size_t index = 0;
  const std::string node_name = node_named(nodes(), node_id)["name"];
  while (agents_[index].name != node_name) ++index;

  const auto killed_at = std::chrono::steady_clock::now();
  kill_agent(index);
  ASSERT_TRUE(eventually([&] { return node_named(nodes(), node_id)["state"] == "lost"; }));
  const auto lost_after = std::chrono::steady_clock::now() - killed_at;
  // Within the deadline, give or take the timer's period and a slow machine.
  EXPECT_LT(lost_after, std::chrono::milliseconds(kHeartbeatTimeoutMs + 5'000));
  const json lost = instance(id);
  EXPECT_EQ(lost["state"], "lost");
  // Billing ends at the last heartbeat that proved the work alive, never later.
  EXPECT_LE(lost["ended_at_ms"].get<int64_t>(),
            node_named(nodes(), node_id)["last_heartbeat_ms"].get<int64_t>());

  start_agent(index);
  ASSERT_TRUE(eventually([&] { return node_named(nodes(), node_id)["state"] == "ready"; }));
  EXPECT_EQ(nodes().size(), 3u);
  // The workload that outlived its agent is no one's any more: it is stopped, not orphaned.
  EXPECT_TRUE(eventually([&] {
    // stdio, not a stream: reading the stat of a process that is exiting fails with ESRCH.
    FILE* stat = std::fopen(("/proc/" + std::to_string(workload_pid) + "/stat").c_str(), "r");
    if (stat == nullptr) return true;
    char state = '?';
    const bool read = std::fscanf(stat, "%*d %*s %c", &state) == 1;
    std::fclose(stat);
    return !read || state == 'Z';
  }));
  EXPECT_EQ(instance(id)["state"], "lost");
}

TEST_F(ClusterTest, AnXidFailsTheInstanceOnThatGpuAndTakesTheGpuOutOfService) {
  const std::string id =
      launch({{"gpus", 1}, {"interactive", true}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  const json running = instance(id);
  const std::string node_id = running["node_id"];
  const int gpu = running["gpu_indices"][0];
  const std::string bad_uuid = running["gpu_uuids"][0];
  const std::string node_name = node_named(nodes(), node_id)["name"];
  for (AgentProcess& agent : agents_) {
    if (agent.name == node_name) std::ofstream(agent.faults) << "xid " << gpu << " 79\n";
  }
  ASSERT_TRUE(instance_reaches(id, "failed")) << instance(id).dump();
  EXPECT_NE(instance(id).value("reason", "").find("XID 79"), std::string::npos);
  const json node = node_named(nodes(), node_id);
  EXPECT_EQ(node["state"], "unhealthy");
  EXPECT_FALSE(node["gpus"][gpu]["healthy"].get<bool>());
  // Whatever comes next never lands on the failed GPU.
  std::vector<std::string> more;
  more.reserve(23);
  for (int i = 0; i < 23; ++i) {
    more.push_back(launch({{"gpus", 1}, {"interactive", true}, {"command", {"sleep", "600"}}}));
  }
  for (const std::string& next : more) {
    ASSERT_TRUE(instance_reaches(next, "running"));
    EXPECT_NE(instance(next)["gpu_uuids"][0], bad_uuid);
  }
}

TEST_F(ClusterTest, ADrainedNodeTakesNoWorkAndEmptiesWhenItsWorkEnds) {
  const std::string id =
      launch({{"gpus", 8}, {"interactive", true}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  const std::string node_id = instance(id)["node_id"];
  EXPECT_EQ(operator_call("POST", "/v1/nodes/" + node_id + "/drain", 200)["state"], "draining");
  EXPECT_EQ(instance(id)["state"], "running");  // Drain never stops running work.
  call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id, "stopped"));
  ASSERT_TRUE(eventually([&] { return node_named(nodes(), node_id)["state"] == "cordoned"; }));
  const std::string next = launch({{"gpus", 1}, {"command", {"true"}}});
  ASSERT_TRUE(instance_reaches(next, "succeeded"));
  EXPECT_NE(instance(next)["node_id"], node_id);
  operator_call("POST", "/v1/nodes/" + node_id + "/uncordon", 200);
  EXPECT_EQ(node_named(nodes(), node_id)["state"], "ready");
}

TEST_F(ClusterTest, BadInstanceRequestsAreRefusedAndCreateNothing) {
  struct Case {
    const char* name;
    json body;
    const char* code;
  };
  const Case cases[] = {
      {"unknown GPU model", {{"gpu_models", {"H900"}}, {"command", {"true"}}}, "invalid_argument"},
      {"zero GPUs", {{"gpus", 0}, {"command", {"true"}}}, "invalid_argument"},
      {"nine GPUs", {{"gpus", 9}, {"command", {"true"}}}, "invalid_argument"},
      {"zero milli", {{"gpu_milli", 0}, {"command", {"true"}}}, "invalid_argument"},
      {"a whole GPU as milli", {{"gpu_milli", 1000}, {"command", {"true"}}}, "invalid_argument"},
      {"a fraction with more GPUs",
       {{"gpus", 2}, {"gpu_milli", 500}, {"command", {"true"}}},
       "invalid_argument"},
      {"empty command", {{"command", json::array()}}, "invalid_argument"},
      {"empty program", {{"command", {""}}}, "invalid_argument"},
      {"no command", {{"gpus", 1}}, "missing_field"},
      {"command as a string", {{"command", "true"}}, "invalid_type"},
      {"unknown price class", {{"price_class", "free"}, {"command", {"true"}}}, "invalid_argument"},
      {"unknown field", {{"gpu", 1}, {"command", {"true"}}}, "unknown_field"},
  };
  const size_t before = call("GET", "/v1/instances", nullptr, 200)["items"].size();
  for (const Case& c : cases) {
    json body = c.body;
    body["project_id"] = project_id_;
    const json answer = call("POST", "/v1/instances", body, 400);
    EXPECT_EQ(answer["error"].value("code", ""), c.code) << c.name << ": " << answer.dump();
  }
  EXPECT_EQ(call("GET", "/v1/instances", nullptr, 200)["items"].size(), before);
  // A filter on a state that does not exist is an error, not an empty list.
  for (const json& answer : {call("GET", "/v1/instances?state=runing", nullptr, 400),
                             operator_call("GET", "/v1/nodes?state=up", 400)}) {
    EXPECT_EQ(answer["error"].value("code", ""), "invalid_argument") << answer.dump();
    EXPECT_NE(answer["error"].value("message", "").find("must be one of"), std::string::npos);
  }
  EXPECT_EQ(operator_call("GET", "/v1/nodes?state=ready", 200)["items"].size(), 3U);
}

TEST_F(ClusterTest, AgentsWithBadCredentialsOrOtherNodesReportsAreRefused) {
  auto credential_of = [&](size_t i) {
    std::ifstream in(agents_[i].state_dir / "node.json");
    return json::parse(in, nullptr, false);
  };
  const json first = credential_of(0);
  const json second = credential_of(1);
  const json beat = {{"node_id", second.value("node_id", "")}, {"workloads", json::array()}};
  auto agent_call = [&](const std::string& path, const json& body, const std::string& key) {
    return daemon_.request("POST", path, body.dump(), key);
  };
  EXPECT_EQ(agent_call("/v1/agent/heartbeat", beat, "allot_node_" + std::string(40, '0')).status,
            401);
  EXPECT_EQ(agent_call("/v1/agent/heartbeat", beat, "").status, 401);
  // Node 0's credential reporting for node 1.
  const ClientResponse other =
      agent_call("/v1/agent/heartbeat", beat, first.value("credential", ""));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(
      agent_call("/v1/agent/heartbeat",
                 {{"node_id", first.value("node_id", "")}, {"workloads", {{{"instance_id", "x"}}}}},
                 first.value("credential", ""))
          .status,
      400);
  // Malformed image listings and pull reports change nothing; a node cannot mark a pull pending.
  const std::string own = first.value("node_id", "");
  for (const json& bad :
       {json{{"node_id", own}, {"images", "all of them"}},
        json{{"node_id", own}, {"images", {{"list", json::array({{{"names", {"x"}}}})}}}},
        json{{"node_id", own}, {"images", {{"list", json::array()}, {"store_free_bytes", "x"}}}},
        json{{"node_id", own},
             {"pulls", json::array({{{"pull_id", "ipl_0000000000000001"}, {"state", "pending"}}})}},
        json{{"node_id", own}, {"pulls", json::array({{{"state", "done"}}})}}}) {
    const ClientResponse refused =
        agent_call("/v1/agent/heartbeat", bad, first.value("credential", ""));
    EXPECT_EQ(refused.status, 400) << bad.dump() << " " << refused.body;
  }
  EXPECT_EQ(operator_call("GET", "/v1/images", 200)["items"].size(), 0u);  // Process nodes.
  const json inventory = {{"name", "intruder"}, {"gpus", json::array()}};
  EXPECT_EQ(agent_call("/v1/agent/join", inventory, "allot_join_" + std::string(40, '1')).status,
            401);
  const json token = operator_call("POST", "/v1/join-tokens", 201);
  operator_call("DELETE", "/v1/join-tokens/" + token.value("id", ""), 200);
  EXPECT_EQ(agent_call("/v1/agent/join", inventory, token.value("token", "")).status, 401);
  // A user's API key is not a node credential, and a node credential is not an API key.
  EXPECT_EQ(agent_call("/v1/agent/heartbeat", beat, member_key_).status, 401);
  EXPECT_EQ(daemon_.request("GET", "/v1/instances", "", first.value("credential", "")).status, 401);
  EXPECT_EQ(nodes().size(), 3u);
  // A revoked credential stops the node's agent: it is refused and exits, and the node goes lost.
  operator_call("POST", "/v1/nodes/" + second.value("node_id", "") + "/revoke-credential", 200);
  EXPECT_EQ(agent_call("/v1/agent/heartbeat", beat, second.value("credential", "")).status, 401);
  EXPECT_EQ(wait_for_exit(agents_[1].pid, std::chrono::seconds(30)), 1);
  agents_[1].pid = -1;
  EXPECT_TRUE(eventually(
      [&] { return node_named(nodes(), second.value("node_id", ""))["state"] == "lost"; }));
}

TEST_F(ClusterTest, TheCliLaunchesFollowsAndStopsWork) {
  auto allot = [&](const std::vector<std::string>& args, const std::string& key) {
    return run_program(bin_dir() + "/src/cli/allot", args,
                       {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
  };
  const RunResult run =
      allot({"-o", "json", "run", "--gpus", "2", "--gpu-type", "H100", "--env", "GREETING=hi", "--",
             "sh", "-c", "echo $GREETING $CUDA_VISIBLE_DEVICES; sleep 0.5; echo bye"},
            member_key_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string id = json::parse(run.out).value("id", "");
  const RunResult logs = allot({"logs", "-f", id}, member_key_);
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hi " + joined(instance(id)["gpu_uuids"]) + "\nbye\n");
  EXPECT_EQ(instance(id)["state"], "succeeded");
  const RunResult ps = allot({"ps", "--all"}, member_key_);
  EXPECT_NE(ps.out.find(id), std::string::npos);
  EXPECT_NE(ps.out.find("succeeded"), std::string::npos);
  // As JSON, the list is the API's items, without the table's short columns.
  const RunResult listed_json = allot({"-o", "json", "ps", "--all"}, member_key_);
  ASSERT_EQ(listed_json.exit_code, 0) << listed_json.err;
  const json ps_items = json::parse(listed_json.out);
  ASSERT_EQ(ps_items.size(), 1U) << listed_json.out;
  EXPECT_EQ(ps_items[0]["id"], id);
  EXPECT_FALSE(ps_items[0].contains("gpu_summary")) << listed_json.out;
  EXPECT_FALSE(ps_items[0].contains("command_line")) << listed_json.out;

  const RunResult sleeper = allot(
      {"-o", "json", "run", "--milli", "250", "--interactive", "--", "sleep", "600"}, member_key_);
  const std::string sleeper_id = json::parse(sleeper.out).value("id", "");
  ASSERT_TRUE(instance_reaches(sleeper_id, "running"));
  // The nodes table says how much of a node is free to place on: a quarter of one GPU is taken.
  const json held = node_named(nodes(), instance(sleeper_id).value("node_id", ""));
  const std::string free_gpus =
      cell_of(allot({"nodes"}, daemon_.admin_key()).out, held.value("id", ""), "FREE");
  EXPECT_EQ(free_gpus, std::to_string(held["gpus"].size() - 1) + ".75");
  const RunResult stopping = allot({"stop", sleeper_id}, member_key_);
  EXPECT_EQ(stopping.exit_code, 0);
  EXPECT_TRUE(stopping.out.starts_with("stopping " + sleeper_id + ":")) << stopping.out;
  ASSERT_TRUE(instance_reaches(sleeper_id, "stopped"));
  const RunResult described = allot({"describe", "instance", sleeper_id}, member_key_);
  EXPECT_NE(described.out.find("\nEVENTS:\n"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("  stopped\n"), std::string::npos) << described.out;

  // Operators see nodes; members are refused (exit 3); bad requests exit 5.
  const RunResult listed = allot({"nodes"}, daemon_.admin_key());
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_NE(listed.out.find("node-0"), std::string::npos);
  const json node_items =
      json::parse(allot({"-o", "json", "nodes"}, daemon_.admin_key()).out, nullptr, false);
  ASSERT_TRUE(node_items.is_array()) << node_items.dump();
  for (const json& node : node_items) EXPECT_FALSE(node.contains("gpu_summary")) << node.dump();
  EXPECT_EQ(allot({"nodes"}, member_key_).exit_code, 3);
  EXPECT_EQ(allot({"run", "--gpus", "9", "--", "true"}, member_key_).exit_code, 5);
  const std::string node_id = nodes()[0]["id"];
  EXPECT_EQ(allot({"node", "cordon", node_id}, daemon_.admin_key()).exit_code, 0);
  EXPECT_EQ(node_named(nodes(), node_id)["state"], "cordoned");
  EXPECT_EQ(allot({"node", "uncordon", node_id}, daemon_.admin_key()).exit_code, 0);
}

// An agent restart on a loaded machine (the CI's two cores running two suites) can take longer
// than the fixture's 2 s deadline; the restart this checks is one within the deadline.
TEST_F(ClusterTest, ALaunchWithAnIdempotencyKeyHappensOnceThroughRetriesAndRestarts) {
  auto client = HttpClient::connect_to(daemon_.url());
  ASSERT_TRUE(client);
  auto send = [&](const std::string& body, const std::string& key) {
    auto answer = (*client)->exchange(ClientRequest{.method = "POST",
                                                    .target = "/v1/instances",
                                                    .body = body,
                                                    .authorization = "Bearer " + member_key_,
                                                    .idempotency_key = key});
    EXPECT_TRUE(answer) << answer.error().message;
    return answer ? *answer : ClientResponse{};
  };
  auto count = [&] {
    return call("GET", "/v1/instances?project_id=" + project_id_, nullptr, 200)["items"].size();
  };
  const json body{{"project_id", project_id_}, {"gpus", 2}, {"command", {"sleep", "600"}}};
  const ClientResponse first = send(body.dump(), "train-1");
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string id = json::parse(first.body).value("id", "");
  // The same launch again, even written with its fields in another order and spacing, is the
  // first one's answer: nothing new runs.
  const std::string reordered = fmt::format(
      R"({{ "command": ["sleep","600"],  "gpus": 2, "project_id": "{}" }})", project_id_);
  for (const std::string& again : {body.dump(), reordered}) {
    const ClientResponse replayed = send(again, "train-1");
    EXPECT_EQ(replayed.status, 200) << replayed.body;
    EXPECT_EQ(json::parse(replayed.body).value("id", ""), id);
  }
  EXPECT_EQ(count(), 1u);
  // Another launch under a used key is refused and says which launch holds the key.
  json other = body;
  other["gpus"] = 1;
  const ClientResponse refused = send(other.dump(), "train-1");
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_NE(refused.body.find(id), std::string::npos) << refused.body;
  for (const std::string& bad :
       {std::string("has space"), std::string(65, 'k'), std::string("a/b")}) {
    const ClientResponse malformed = send(body.dump(), bad);
    EXPECT_EQ(malformed.status, 400) << malformed.body;
    EXPECT_NE(malformed.body.find("Idempotency-Key"), std::string::npos) << malformed.body;
  }
  EXPECT_EQ(count(), 1u);
  // A gang's replay names the same members.
  json gang = body;
  gang["nodes"] = 2;
  const ClientResponse made = send(gang.dump(), "gang-1");
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(json::parse(send(gang.dump(), "gang-1").body)["members"],
            json::parse(made.body)["members"]);
  EXPECT_EQ(count(), 3u);

  // Keys are durable: after a restart the same launches are still the same.
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start_on_same_port());
  const ClientResponse after = send(body.dump(), "train-1");
  EXPECT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(json::parse(after.body).value("id", ""), id);
  // The CLI sends a key of its own each run, or the one it is given.
  auto allot_run = [&] {
    return run_program(
        bin_dir() + "/src/cli/allot",
        {"-o", "json", "run", "--gpus", "1", "--idempotency-key", "cli-1", "--", "sleep", "600"},
        {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + member_key_, "HOME=/nonexistent"});
  };
  const RunResult cli_first = allot_run();
  const RunResult cli_again = allot_run();
  ASSERT_EQ(cli_first.exit_code, 0) << cli_first.err;
  ASSERT_EQ(cli_again.exit_code, 0) << cli_again.err;
  EXPECT_EQ(json::parse(cli_first.out).value("id", ""), json::parse(cli_again.out).value("id", ""));
  EXPECT_EQ(count(), 4u);
}

class AgentRestartTest : public ClusterTest {
 protected:
  AgentRestartTest() { heartbeat_timeout_ms_ = 8'000; }
};

TEST_F(AgentRestartTest, ARestartedAgentReadoptsItsRunningWork) {
  const std::string id =
      launch({{"gpus", 1}, {"interactive", true}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  const std::string node_name = node_named(nodes(), instance(id)["node_id"])["name"];
  size_t index = 0;
  while (agents_[index].name != node_name) ++index;
  ::kill(agents_[index].pid, SIGTERM);
  const int code = wait_for_exit(agents_[index].pid, std::chrono::seconds(30));
  EXPECT_EQ(code, 0);
  if (code == -1) ::kill(agents_[index].pid, SIGKILL);  // No agent outlives the test.
  agents_[index].pid = -1;
  start_agent(index);  // Back within the heartbeat deadline.
  // The workload was never stopped: the new agent reports it running, and it stays so.
  std::this_thread::sleep_for(std::chrono::milliseconds(heartbeat_timeout_ms_ + 500));
  EXPECT_EQ(instance(id)["state"], "running") << instance(id).dump();
  call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id, "stopped"));
  EXPECT_NE(instance(id).value("reason", "").find("signal 15"), std::string::npos);
}

TEST_F(ClusterTest, AnAgentKeepsItsCredentialInAFreshFileOnlyItsUserCanRead) {
  // A temporary file left where the agent writes (here a link to a file others may read) must
  // not receive the credential: the agent writes only to a file it has just created.
  AgentProcess extra{.name = "node-extra",
                     .state_dir = dir_.path() / "agent-extra",
                     .faults = dir_.path() / "faults-extra"};
  std::filesystem::create_directories(extra.state_dir);
  const auto elsewhere = dir_.path() / "elsewhere";
  std::ofstream(elsewhere) << "public\n";
  std::filesystem::permissions(elsewhere, std::filesystem::perms(0644));
  std::filesystem::create_symlink(elsewhere, extra.state_dir / "node.json.tmp");
  agents_.push_back(extra);
  start_agent(agents_.size() - 1);
  ASSERT_TRUE(eventually([&] { return nodes().size() == agent_count_ + 1; })) << nodes().dump();

  std::ifstream public_file(elsewhere);
  std::string text;
  std::getline(public_file, text);
  EXPECT_EQ(text, "public");
  const auto saved = extra.state_dir / "node.json";
  EXPECT_FALSE(std::filesystem::is_symlink(saved));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(saved.string() + ".tmp")));
  EXPECT_EQ(std::filesystem::status(saved).permissions(), std::filesystem::perms(0600));
  std::ifstream in(saved);
  EXPECT_FALSE(json::parse(in, nullptr, false).value("credential", "").empty());
}

TEST_F(ClusterTest, AControllerDownForTwiceTheTimeoutLosesAndKillsNothingWhenItReturns) {
  std::vector<std::string> ids;
  std::vector<pid_t> pids;
  ids.reserve(6);
  pids.reserve(6);
  for (int i = 0; i < 6; ++i) {
    ids.push_back(launch({{"gpus", 4}, {"command", {"sh", "-c", "echo $$; exec sleep 600"}}}));
  }
  for (const std::string& id : ids) {
    ASSERT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
    ASSERT_TRUE(eventually([&] { return !logs(id).empty(); }));
    pids.push_back(std::stoi(logs(id)));
  }
  daemon_.kill();
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kHeartbeatTimeoutMs));
  ASSERT_TRUE(daemon_.start_on_same_port());
  // Past another whole timeout, with the agents reporting again.
  std::this_thread::sleep_for(std::chrono::milliseconds(kHeartbeatTimeoutMs + 1'000));
  for (const json& node : nodes()) EXPECT_EQ(node["state"], "ready") << node.dump();
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(instance(ids[i])["state"], "running") << instance(ids[i]).dump();
    EXPECT_EQ(::kill(pids[i], 0), 0) << ids[i] << "'s workload was killed";
  }
}

TEST_F(ClusterTest, AnEmptyNodeDeletedLeavesTheFleetAndItsAgentIsRefused) {
  const std::string busy_id =
      instance(launch({{"gpus", 1}, {"interactive", true}, {"command", {"sleep", "600"}}}))
          .value("node_id", "");
  ASSERT_FALSE(busy_id.empty());
  // A node with work on it stays: a stable code, and nothing changes.
  const ClientResponse busy =
      daemon_.request("DELETE", "/v1/nodes/" + busy_id, "", daemon_.admin_key());
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(json::parse(busy.body)["error"]["code"], "conflict");
  EXPECT_EQ(daemon_.request("DELETE", "/v1/nodes/" + busy_id, "", member_key_).status, 403);
  EXPECT_EQ(
      daemon_.request("DELETE", "/v1/nodes/nod_ffffffffffffffff", "", daemon_.admin_key()).status,
      404);
  EXPECT_EQ(nodes().size(), 3u);

  size_t empty = 0;
  while (node_named(nodes(), busy_id).value("name", "") == agents_[empty].name) ++empty;
  const std::string empty_id = [&] {
    for (const json& node : nodes()) {
      if (node["name"] == agents_[empty].name) return node.value("id", "");
    }
    return std::string();
  }();
  const RunResult deleted = cli({"node", "delete", empty_id}, daemon_.admin_key());
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  // Gone from the fleet, the counts and /metrics; kept, and shown when asked for.
  EXPECT_EQ(nodes().size(), 2u);
  EXPECT_TRUE(node_named(nodes(), empty_id).is_null());
  const json all = operator_call("GET", "/v1/nodes?include_deleted=true", 200)["items"];
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(node_named(all, empty_id)["state"], "deleted");
  EXPECT_TRUE(node_named(all, empty_id)["deleted_at"].is_string());
  EXPECT_EQ(operator_call("GET", "/v1/nodes?state=deleted", 200)["items"].size(), 1u);
  EXPECT_EQ(metric_sum("allot_nodes"), 2);
  // Its agent is refused from now on and stops; the node stays deleted, never lost.
  EXPECT_EQ(wait_for_exit(agents_[empty].pid, std::chrono::seconds(30)), 1);
  agents_[empty].pid = -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(kHeartbeatTimeoutMs + 500));
  EXPECT_EQ(operator_call("GET", "/v1/nodes/" + empty_id, 200)["state"], "deleted");
  // Deleting it again changes nothing.
  EXPECT_EQ(cli({"node", "delete", empty_id}, daemon_.admin_key()).exit_code, 0);
}

TEST_F(ClusterTest, TheCliRevokesANodesCredentialAndItsAgentStops) {
  const json first = nodes()[0];
  const std::string id = first.value("id", "");
  size_t index = 0;
  while (agents_[index].name != first.value("name", "")) ++index;
  EXPECT_EQ(cli({"node", "revoke", id}, member_key_).exit_code, 3);
  const RunResult revoked = cli({"node", "revoke", id}, daemon_.admin_key());
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_EQ(wait_for_exit(agents_[index].pid, std::chrono::seconds(30)), 1);
  agents_[index].pid = -1;
}

TEST_F(ClusterTest, AGangStartsOnThreeNodesAtOnceAndStopsTogether) {
  const json created = call("POST", "/v1/instances",
                            {{"gpus", 8},
                             {"nodes", 3},
                             {"interactive", true},
                             {"command",
                              {"sh", "-c",
                               "echo \"$ALLOT_GANG_RANK/$ALLOT_GANG_SIZE $ALLOT_GANG_HOSTS "
                               "$CUDA_VISIBLE_DEVICES\"; sleep 60"}}},
                            201);
  ASSERT_EQ(created["members"].size(), 3u) << created.dump();
  std::set<std::string> nodes;
  std::string hosts;
  for (size_t rank = 0; rank < 3; ++rank) {
    const std::string id = created["members"][rank];
    ASSERT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
    ASSERT_TRUE(eventually([&] { return !logs(id).empty(); }));
    const json got = instance(id);
    EXPECT_EQ(got["gang_rank"], rank);
    nodes.insert(got["node_id"].get<std::string>());
    const std::string line = logs(id);
    EXPECT_EQ(line.substr(0, 4), std::to_string(rank) + "/3 ") << line;
    EXPECT_NE(line.find(joined(got["gpu_uuids"])), std::string::npos) << line;
    const std::string these_hosts = line.substr(4, line.find(' ', 4) - 4);
    if (hosts.empty()) hosts = these_hosts;
    EXPECT_EQ(these_hosts, hosts);  // Every member is told the same hosts, in rank order.
  }
  EXPECT_EQ(nodes.size(), 3u);
  // The cluster is full; a second gang waits whole, and says why.
  const json waiting =
      call("POST", "/v1/instances", {{"gpus", 1}, {"nodes", 2}, {"command", {"true"}}}, 201);
  EXPECT_EQ(instance(waiting["id"])["state"], "queued");
  EXPECT_NE(instance(waiting["id"])["reason"].get<std::string>().find("2 nodes at once"),
            std::string::npos);
  // Stopping one member stops the gang; then the waiting gang starts.
  call("POST", "/v1/instances/" + created["members"][1].get<std::string>() + "/stop", nullptr, 200);
  for (const json& id : created["members"]) {
    EXPECT_TRUE(instance_reaches(id.get<std::string>(), "stopped")) << id;
  }
  for (const json& id : waiting["members"]) {
    EXPECT_TRUE(instance_reaches(id.get<std::string>(), "succeeded")) << id;
  }
}

TEST_F(ClusterTest, AQuotaHoldsWorkBackAndSaysSo) {
  const std::string tenant =
      call("GET", "/v1/whoami", nullptr, 200)["tenant"]["id"].get<std::string>();
  daemon_.request("PUT", "/v1/quotas", json{{"tenant_id", tenant}, {"gpus", 8}}.dump(),
                  daemon_.admin_key());
  const std::string first =
      launch({{"gpus", 6}, {"interactive", true}, {"command", {"sleep", "60"}}});
  const std::string second = launch({{"gpus", 4}, {"command", {"true"}}});
  ASSERT_TRUE(instance_reaches(first, "running"));
  EXPECT_EQ(instance(second)["state"], "queued");
  EXPECT_NE(instance(second)["reason"].get<std::string>().find("holds 6 of its 8 GPUs"),
            std::string::npos)
      << instance(second).dump();
  call("POST", "/v1/instances/" + first + "/stop", nullptr, 200);
  EXPECT_TRUE(instance_reaches(second, "succeeded")) << instance(second).dump();
}

// Agents whose workloads may run 8 s without them; the controller takes a node as lost after 6 s
// without a word. Both leave room for an agent that is slow to start again on a loaded machine,
// so that a restart meant to be short is short.
class OrphanTest : public ClusterTest {
 protected:
  OrphanTest() {
    agent_count_ = 1;
    heartbeat_timeout_ms_ = 6'000;
    extra_agent_args_ = {"--orphan-timeout-s", "8"};
  }
};

TEST_F(OrphanTest, AShortAgentRestartKillsNothingAndAnAgentGoneForLongerStopsItsWork) {
  const std::string id =
      launch({{"gpus", 1}, {"command", {"sh", "-c", "echo $$; exec sleep 600"}}});
  ASSERT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
  ASSERT_TRUE(eventually([&] { return !logs(id).empty(); }));
  const pid_t pid = std::stoi(logs(id));
  // Away for one second: back long before the deadline, the work still runs past it.
  kill_agent(0);
  const auto killed_at = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  start_agent(0);
  std::this_thread::sleep_until(killed_at + std::chrono::seconds(9));  // Past the orphan deadline.
  EXPECT_EQ(::kill(pid, 0), 0) << "a short agent restart killed the work";
  EXPECT_EQ(instance(id)["state"], "running") << instance(id).dump();
  // Gone for good: the node is lost (billing ends at its last heartbeat) and the work stops
  // at the deadline rather than running on unbilled.
  kill_agent(0);
  EXPECT_TRUE(instance_reaches(id, "lost")) << instance(id).dump();
  EXPECT_TRUE(eventually([&] { return ::kill(pid, 0) != 0; })) << "the work outlived the deadline";
}

}  // namespace
}  // namespace allot::testing
