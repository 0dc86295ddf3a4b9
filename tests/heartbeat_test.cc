// Heartbeats that bring only readings (GPU telemetry, metered energy) are not written one by one;
// what a crash loses of them the next heartbeat makes up, and every change of state in a
// heartbeat is still durable before the agent is answered.
#include <sstream>
#include <thread>

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

}  // namespace
}  // namespace allot::testing
