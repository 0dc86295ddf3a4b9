// Idle stop end to end: allotd and a real agent simulating 8 GPUs. The simulated GPUs report the
// utilisation a test writes in their fault file ("util INDEX PCT"): every GPU reads 100 % until
// the test makes one instance's GPU read 2 %, so which work is idle is the test's choice, not the
// simulator's random load. allotd allows windows from 2 s so that the test runs in seconds.
#include <fstream>
#include <set>
#include <thread>

#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class IdleStopTest : public ClusterTest {
 protected:
  IdleStopTest() {
    agent_count_ = 1;
    extra_daemon_args_ = {"--idle-min-window-s", "2"};
  }

  // Every GPU of the node reads 100 %, except `idle_gpu` (when >= 0), which reads 2 %.
  void set_utilisation(int idle_gpu) {
    std::ofstream out(agents_[0].faults, std::ios::trunc);
    for (int gpu = 0; gpu < 8; ++gpu)
      out << "util " << gpu << " " << (gpu == idle_gpu ? 2 : 100) << "\n";
  }

  std::vector<json> idle_events(const std::string& instance_id) {
    std::vector<json> out;
    const json list = call("GET", "/v1/events?limit=1000", nullptr, 200);
    for (const json& e : list["items"]) {
      if (e["kind"] == "instance.idle" && e["data"]["instance_id"] == instance_id) {
        out.push_back(e);
      }
    }
    return out;
  }

  std::string start(const json& body) {
    const std::string id = launch(body);
    EXPECT_TRUE(instance_reaches(id, "running")) << instance(id).dump();
    return id;
  }
};

const json kSleep = {"sleep", "600"};

TEST_F(IdleStopTest, AnIdleInstanceIsStoppedByItsPolicyAndABusyOneKeepsRunning) {
  set_utilisation(-1);
  const json policy = {{"threshold_pct", 10}, {"window_s", 2}};
  const std::string idle = start({{"gpus", 1}, {"command", kSleep}, {"idle", policy}});
  const std::string busy = start({{"gpus", 1}, {"command", kSleep}, {"idle", policy}});
  EXPECT_EQ(instance(idle)["spec"]["idle"]["action"], "stop");
  set_utilisation(instance(idle)["gpu_indices"][0].get<int>());

  ASSERT_TRUE(instance_reaches(idle, "stopped")) << instance(idle).dump();
  const json stopped = instance(idle);
  EXPECT_EQ(stopped["reason"].get<std::string>().rfind("idle: GPUs under 10 % for 2 s (", 0), 0U)
      << stopped.dump();
  const auto events = idle_events(idle);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0]["data"]["action"], "stop");
  EXPECT_EQ(events[0]["data"]["reason"], "idle: GPUs under 10 % for 2 s");
  // The busy one ran through all of that, and goes on running for more than its window.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(instance(busy)["state"], "running") << instance(busy).dump();
  EXPECT_FALSE(instance(busy)["stop_requested"].get<bool>());
  EXPECT_TRUE(idle_events(busy).empty());
}

TEST_F(IdleStopTest, AProjectPolicyNotifiesOnceAndBadPoliciesChangeNothing) {
  const std::string path = "/v1/projects/" + project_id_ + "/idle";
  EXPECT_TRUE(call("GET", path, nullptr, 200)["idle"].is_null());
  // Members may read the policy, not set it.
  call("PUT", path, {{"threshold_pct", 10}, {"window_s", 2}}, 403);
  const json set =
      as_operator("PUT", path, {{"threshold_pct", 10}, {"window_s", 2}, {"action", "notify"}}, 200);
  EXPECT_EQ(set["idle"], (json{{"threshold_pct", 10}, {"window_s", 2}, {"action", "notify"}}));
  struct Bad {
    json body;
    const char* code;
  };
  for (const Bad& bad :
       {Bad{{{"threshold_pct", 0}, {"window_s", 60}}, "invalid_argument"},
        Bad{{{"threshold_pct", 10}, {"window_s", 1}}, "invalid_argument"},
        Bad{{{"threshold_pct", 10}, {"window_s", 60}, {"action", "kill"}}, "invalid_argument"},
        Bad{{{"window_s", 60}}, "missing_field"},
        Bad{{{"threshold_pct", "10"}, {"window_s", 60}}, "invalid_type"},
        Bad{{{"threshold_pct", 10}, {"window_s", 60}, {"when", 1}}, "unknown_field"}}) {
    EXPECT_EQ(as_operator("PUT", path, bad.body, 400)["error"]["code"], bad.code) << bad.body;
  }
  EXPECT_EQ(call("GET", path, nullptr, 200)["idle"], set["idle"]);
  EXPECT_EQ(call("POST", "/v1/instances",
                 {{"project_id", project_id_},
                  {"command", kSleep},
                  {"idle", {{"threshold_pct", 101}, {"window_s", 60}}}},
                 400)["error"]["code"],
            "invalid_argument");

  set_utilisation(-1);
  const std::string id = start({{"gpus", 1}, {"command", kSleep}});
  set_utilisation(instance(id)["gpu_indices"][0].get<int>());
  ASSERT_TRUE(eventually([&] { return !idle_events(id).empty(); })) << instance(id).dump();
  // Notified once for each idle stretch, and still running. A heartbeat late by more than three
  // intervals (a loaded machine) rightly starts a new stretch, which is owed its own notice: so
  // the notices are counted per stretch, never two for one.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto events = idle_events(id);
  ASSERT_FALSE(events.empty());
  std::set<int64_t> stretches;
  for (const json& e : events) {
    EXPECT_EQ(e["data"]["action"], "notify");
    EXPECT_TRUE(stretches.insert(e["data"]["idle_since_ms"].get<int64_t>()).second)
        << "two notices for the stretch idle since " << e["data"]["idle_since_ms"];
  }
  EXPECT_EQ(instance(id)["state"], "running");
  EXPECT_TRUE(instance(id)["idle_since"].is_string());

  EXPECT_TRUE(as_operator("DELETE", path, nullptr, 200)["idle"].is_null());
  EXPECT_TRUE(call("GET", "/v1/projects/" + project_id_, nullptr, 200)["idle"].is_null());
}

}  // namespace
}  // namespace allot::testing
