// Heartbeats that bring only readings (GPU telemetry, metered energy) are not written one by one;
// what a crash loses of them the next heartbeat makes up, and every change of state in a
// heartbeat is still durable before the agent is answered. An agent's long poll is answered when
// its own node's work changes, and at its deadline otherwise.
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "client/http_client.h"
#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class HeartbeatTest : public ClusterTest {
 protected:
  // The sum of the /metrics lines of series `name` whose labels hold `labels`.
  double metric(const std::string& name, const std::string& labels = "") {
    const std::string text = daemon_.request("GET", "/metrics", "", daemon_.admin_key()).body;
    std::istringstream lines(text);
    double sum = 0;
    for (std::string line; std::getline(lines, line);) {
      if ((line.starts_with(name + "{") || line.starts_with(name + " ")) &&
          line.find(labels) != std::string::npos) {
        sum += std::stod(line.substr(line.rfind(' ') + 1));
      }
    }
    return sum;
  }
  double heartbeats() {
    return metric("allot_http_request_duration_seconds_count",
                  R"(route="/v1/agent/heartbeat",code="200")");
  }
  // Agent i's node id and credential, as it keeps them.
  std::pair<std::string, std::string> credential_of(size_t i) {
    std::ifstream in(agents_[i].state_dir / "node.json");
    const json doc = json::parse(in, nullptr, false);
    return {doc.value("node_id", ""), doc.value("credential", "")};
  }
  // POST /v1/agent/wait as agent i, from generation `seen`: the status and the generation.
  // Its own connection: several wait at once.
  std::pair<int, int64_t> wait(size_t i, int64_t seen) {
    auto client = HttpClient::connect_to(daemon_.url());
    if (!client) return {0, -1};
    auto answer = (*client)->send("POST", "/v1/agent/wait", json{{"generation", seen}}.dump(),
                                  credential_of(i).second);
    if (!answer) return {0, -1};
    const json doc = json::parse(answer->body, nullptr, false);
    return {answer->status, doc.is_object() ? doc.value("generation", int64_t{-1}) : -1};
  }
  // The node's generation, as a heartbeat with no reports answers it.
  int64_t generation(size_t i) {
    const auto [node_id, credential] = credential_of(i);
    const json beat = {{"node_id", node_id}, {"workloads", json::array()}};
    const ClientResponse answer =
        daemon_.request("POST", "/v1/agent/heartbeat", beat.dump(), credential);
    return json::parse(answer.body, nullptr, false).value("generation", int64_t{-1});
  }
  double energy_kwh(const std::string& id) {
    return std::stod(instance(id).value("energy_kwh", "0"));
  }
};

TEST_F(HeartbeatTest, HeartbeatsThatOnlyBringReadingsAreNotCommittedOneByOne) {
  const double commits_before = metric("allot_store_commit_duration_seconds_count");
  const double beats_before = heartbeats();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const double beats = heartbeats() - beats_before;
  const double commits = metric("allot_store_commit_duration_seconds_count") - commits_before;
  // Three agents every 300 ms: some 30 heartbeats. The readings wait up to 10 s, so at most one
  // write of them falls in these 3 s.
  EXPECT_GE(beats, 15);
  EXPECT_LE(commits, 1) << beats << " heartbeats";
  // Yet a change of state is written at once: a cordon commits.
  const std::string node = nodes().at(0).value("id", "");
  as_operator("POST", "/v1/nodes/" + node + "/cordon", nullptr, 200);
  EXPECT_GE(metric("allot_store_commit_duration_seconds_count") - commits_before, commits + 1);
}

TEST_F(HeartbeatTest, EnergyThatACrashLostIsMadeUpByTheNextHeartbeat) {
  const std::string id = launch({{"gpus", 1}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  ASSERT_TRUE(eventually([&] { return energy_kwh(id) > 0; })) << instance(id).dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // Read, then killed before those readings could be written (they wait up to 10 s).
  const double seen = energy_kwh(id);
  daemon_.kill();
  ASSERT_TRUE(daemon_.start_on_same_port());
  EXPECT_EQ(instance(id).value("state", ""), "running");
  // The agent's counters kept counting: its next heartbeat brings all of it, the lost part too.
  EXPECT_TRUE(eventually([&] { return energy_kwh(id) >= seen; }))
      << seen << " before the crash, " << energy_kwh(id) << " after";
}

TEST_F(HeartbeatTest, AnEndReportedInAHeartbeatIsDurableBeforeTheAgentIsAnswered) {
  const std::string id = launch({{"gpu_milli", 100}, {"command", {"true"}}});
  ASSERT_TRUE(instance_reaches(id, "succeeded"));
  daemon_.kill();
  ASSERT_TRUE(daemon_.start_on_same_port());
  const json back = instance(id);
  EXPECT_EQ(back.value("state", ""), "succeeded") << back.dump();
  EXPECT_FALSE(back["ended_at"].is_null());
}

TEST_F(HeartbeatTest, AWaitWakesForItsOwnNodesWorkAndOtherwiseAtItsDeadline) {
  // Only node 0 takes work.
  for (size_t i = 1; i < agents_.size(); ++i) {
    as_operator("POST", "/v1/nodes/" + credential_of(i).first + "/cordon", nullptr, 200);
  }
  const int64_t seen0 = generation(0);
  const int64_t seen1 = generation(1);
  ASSERT_GE(seen0, 0);
  ASSERT_GE(seen1, 0);
  // Many waits parked on node 1, one on node 0.
  std::vector<std::future<std::pair<int, int64_t>>> others;
  others.reserve(20);
  for (int i = 0; i < 20; ++i) {
    others.push_back(std::async(std::launch::async, [&] { return wait(1, seen1); }));
  }
  auto mine = std::async(std::launch::async, [&] { return wait(0, seen0); });
  const std::string id = launch({{"gpus", 1}, {"command", {"sleep", "600"}}});
  const auto [status, generation] = mine.get();
  EXPECT_EQ(status, 200);
  EXPECT_GT(generation, seen0) << "the wait must end because node 0 was given work";
  EXPECT_EQ(instance(id).value("node_id", ""), credential_of(0).first);
  // Node 1's waits end at their deadline (a second here), their node unchanged.
  for (auto& other : others) EXPECT_EQ(other.get(), std::pair(200, seen1));
}

TEST_F(HeartbeatTest, AWaitCannotWatchAnotherNodeOrComeFromAnyoneButANode) {
  const auto [node1, credential1] = credential_of(1);
  const json body = {{"generation", 0}, {"node_id", node1}};
  const ClientResponse other =
      daemon_.request("POST", "/v1/agent/wait", body.dump(), credential_of(0).second);
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_EQ(daemon_.request("POST", "/v1/agent/wait", "{}", member_key_).status, 401);
  EXPECT_EQ(daemon_.request("POST", "/v1/agent/wait", "{}", "").status, 401);
  EXPECT_EQ(daemon_.request("POST", "/v1/agent/wait", R"({"generation":-1})", credential1).status,
            400);
}

}  // namespace
}  // namespace allot::testing
