// Spot prices that follow utilisation, end to end: allotd with a real agent, a rule set through
// the API, spot work that fills the GPUs and moves the price along the curve, spot work priced out
// of its maximum preempted, and the history shown by `allot spot`; the stop notice preempted work
// reads when its SIGTERM arrives.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class SpotTest : public ClusterTest {
 protected:
  SpotTest() {
    agent_count_ = 1;
    free_prices_ = false;  // Its rule sets the spot price.
  }

  json rule() {
    const json rules = operator_call("GET", "/v1/spot-rules", 200);
    return rules["items"].empty() ? json::object() : rules["items"][0];
  }

  RunResult allot(const std::vector<std::string>& args) {
    return run_program(
        bin_dir() + "/src/cli/allot", args,
        {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + daemon_.admin_key(), "HOME=/nonexistent"});
  }
};

TEST_F(SpotTest, TheSpotPriceFollowsUtilisationAndPricesOutThriftyWork) {
  const RunResult set = allot({"-o", "json", "spot", "set", "--model", "H100-80GB", "--region",
                               "default", "--curve", "0:1.00,50:2.00,100:4.00", "--interval", "1"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  // Idle: the first point of the curve.
  ASSERT_TRUE(eventually([&] { return rule().value("spot_price_now", json()) == "1.000000"; }))
      << rule().dump();

  const std::string thrifty = launch(
      {{"gpus", 4}, {"price_class", "spot"}, {"max_price", "1.50"}, {"command", {"sleep", "60"}}});
  const std::string keen =
      launch({{"gpus", 2}, {"price_class", "spot"}, {"command", {"sleep", "60"}}});
  ASSERT_TRUE(instance_reaches(keen, "running"));
  // With 6 of 8 GPUs taken the price climbs past the thrifty work's 1.50 (to 3.00, or to 2.00 if
  // the rule looked between the two launches), and the thrifty work is preempted.
  ASSERT_TRUE(instance_reaches(thrifty, "preempted")) << instance(thrifty).dump();
  EXPECT_EQ(instance(keen)["state"], "running");
  // Then 2 of 8 GPUs: 1.50, a quarter of the way along the curve.
  ASSERT_TRUE(eventually([&] { return rule().value("spot_price_now", json()) == "1.500000"; }))
      << rule().dump();
  EXPECT_EQ(rule()["curve_price_now"], "1.500000");
  EXPECT_EQ(rule()["utilisation_pct"], "25.0");

  // The history keeps every step; the CLI shows it.
  const json history = rule()["history"];
  ASSERT_GE(history.size(), 3U) << history.dump();
  EXPECT_EQ(history.front()["gpu_hour"], "1.000000");
  EXPECT_TRUE(history[1]["gpu_hour"] == "3.000000" || history[1]["gpu_hour"] == "2.000000")
      << history.dump();
  EXPECT_EQ(history.back()["gpu_hour"], "1.500000");
  const RunResult shown = allot({"spot", "history", "--model", "H100-80GB", "--region", "default"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("1.500000"), std::string::npos) << shown.out;

  // A curve that falls back in utilisation is refused with its code, and the rule stays.
  const RunResult bad = allot({"spot", "set", "--model", "H100-80GB", "--region", "default",
                               "--curve", "0:1.00,50:2.00,40:3.00,100:4.00"});
  EXPECT_EQ(bad.exit_code, 5) << bad.out;
  EXPECT_NE(bad.err.find("invalid_argument"), std::string::npos) << bad.err;
  EXPECT_EQ(rule()["curve"].size(), 3U);

  const RunResult removed =
      allot({"spot", "delete", "--model", "H100-80GB", "--region", "default"});
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_TRUE(operator_call("GET", "/v1/spot-rules", 200)["items"].empty());
}

int64_t now_ms() { return SystemClock().now_ms(); }

class StopNoticeTest : public ClusterTest {
 protected:
  StopNoticeTest() {
    agent_count_ = 1;
    extra_daemon_args_ = {"--preempt-grace-ms", "2000"};  // Other stops keep the tests' 500 ms.
  }

  // Spot work that goes back to the queue when preempted, running `script` in a shell.
  std::string launch_requeued(int gpus, const std::string& script) {
    return launch({{"gpus", gpus},
                   {"price_class", "spot"},
                   {"requeue", true},
                   {"command", {"/bin/sh", "-c", script}}});
  }

  // The stop notices a workload printed, one JSON object a line, from its log.
  std::vector<json> notices(const std::string& id) {
    std::vector<json> found;
    std::istringstream lines(logs(id));
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("{")) found.push_back(json::parse(line));
    }
    return found;
  }
};

TEST_F(StopNoticeTest, PreemptedSpotWorkIsToldWhyAndByWhenBeforeItsSigtermAndComesBack) {
  // The checkpointing a training job would do on SIGTERM: read the notice, say so, end.
  const std::string script =
      "trap 'cat \"$ALLOT_STOP_NOTICE\"; exit 0' TERM; echo up; while :; do sleep 0.05; done";
  const std::string spot = launch_requeued(8, script);
  ASSERT_TRUE(eventually([&] { return logs(spot).find("up\n") != std::string::npos; }));

  const int64_t before_ms = now_ms();
  const std::string urgent = launch({{"gpus", 8}, {"command", {"sleep", "60"}}});
  ASSERT_TRUE(eventually([&] { return !notices(spot).empty(); }))
      << logs(spot) << instance(spot).dump() << instance(urgent).dump();
  const int64_t after_ms = now_ms();
  const json notice = notices(spot).front();
  EXPECT_EQ(notice["reason"], "preempted") << notice.dump();
  EXPECT_EQ(notice["grace_ms"], 2000);
  EXPECT_GE(notice["deadline_ms"].get<int64_t>(), before_ms + 2000);
  EXPECT_LE(notice["deadline_ms"].get<int64_t>(), after_ms + 2000);
  EXPECT_TRUE(notice["deadline"].get<std::string>().ends_with("Z")) << notice.dump();
  ASSERT_TRUE(instance_reaches(urgent, "running"));
  EXPECT_EQ(instance(spot)["state"], "queued");

  // Once the GPUs are free it runs again, afresh; a stop asked of it is told as one.
  call("POST", "/v1/instances/" + urgent + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(spot, "running"));
  ASSERT_TRUE(eventually([&] {
    const std::string text = logs(spot);
    return text.find("up\n") != text.rfind("up\n");
  })) << logs(spot);
  call("POST", "/v1/instances/" + spot + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(spot, "stopped"));
  ASSERT_TRUE(eventually([&] { return notices(spot).size() == 2; })) << logs(spot);
  EXPECT_EQ(notices(spot).back()["reason"], "stopped");
  EXPECT_EQ(notices(spot).back()["grace_ms"], 500);
  EXPECT_NE(notices(spot).back()["message"].get<std::string>().find("stop"), std::string::npos)
      << notices(spot).back().dump();
}

// A long grace for preempted work, so that a requeued instance is placed again on its node while
// its last run is still there.
class RequeueGraceTest : public StopNoticeTest {
 protected:
  RequeueGraceTest() {
    extra_daemon_args_ = {"--preempt-grace-ms", "6000"};
    heartbeat_timeout_ms_ = 10'000;  // The node stays while a test speaks for its agent.
  }

  // Agent 0's node id and credential, as it keeps them.
  std::pair<std::string, std::string> credential() {
    std::ifstream in(agents_[0].state_dir / "node.json");
    const json doc = json::parse(in, nullptr, false);
    return {doc.value("node_id", ""), doc.value("credential", "")};
  }
};

TEST_F(RequeueGraceTest, ANewRunOnTheSameNodeWaitsForTheLastOneToEndAndGetsItsOwnGpus) {
  const std::string older =
      launch({{"gpus", 4}, {"price_class", "spot"}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(older, "running"));
  // It reads its notice on SIGTERM but runs on, as a slow checkpoint would, till the SIGKILL.
  const std::string script =
      "trap 'cat \"$ALLOT_STOP_NOTICE\"' TERM; echo \"up $CUDA_VISIBLE_DEVICES\"; "
      "while :; do sleep 0.05; done";
  const std::string spot = launch_requeued(2, script);
  ASSERT_TRUE(eventually([&] { return logs(spot).find("up ") != std::string::npos; }));

  // 5 GPUs: the 2 free, then the spot work of least loss first (the requeued one, then the
  // older), which leaves 3 free: the requeued instance fits there again at once.
  const std::string urgent = launch({{"gpus", 5}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(urgent, "running"));
  ASSERT_TRUE(instance_reaches(older, "preempted"));
  ASSERT_TRUE(eventually([&] { return !notices(spot).empty(); })) << logs(spot);
  EXPECT_EQ(notices(spot).front()["reason"], "preempted");
  EXPECT_EQ(notices(spot).front()["grace_ms"], 6000);

  // Its next run starts only once the last has ended (SIGKILL at the deadline), on the GPUs it
  // was given now, never on the last run's.
  ASSERT_TRUE(eventually([&] {
    const std::string text = logs(spot);
    return text.find("up ") != text.rfind("up ");
  })) << logs(spot)
      << instance(spot).dump();
  ASSERT_TRUE(instance_reaches(spot, "running"));
  const json now = instance(spot);
  std::string gpus;
  for (const json& uuid : now["gpu_uuids"])
    gpus += (gpus.empty() ? "" : ",") + uuid.get<std::string>();
  const std::string text = logs(spot);
  EXPECT_EQ(text.substr(text.rfind("up ")), "up " + gpus + "\n") << text;
  // The old run counted as the run it was (a preempted record), not as this one.
  EXPECT_EQ(now["run"], 1);
}

TEST_F(RequeueGraceTest, TheHeartbeatStopsAnEarlierRunAndHoldsTheNextBackTillTheNodeLetsItGo) {
  const std::string older =
      launch({{"gpus", 6}, {"price_class", "spot"}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(older, "running"));
  const std::string spot = launch(
      {{"gpus", 2}, {"price_class", "spot"}, {"requeue", true}, {"command", {"sleep", "600"}}});
  ASSERT_TRUE(instance_reaches(spot, "running"));
  // The test speaks for the node from here, so that nothing the agent does comes between.
  kill_agent(0);
  const auto [node_id, key] = credential();
  auto beat = [&, node_id = node_id, key = key](const json& workloads) {
    const ClientResponse answer =
        daemon_.request("POST", "/v1/agent/heartbeat",
                        json{{"node_id", node_id}, {"workloads", workloads}}.dump(), key);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return json::parse(answer.body, nullptr, false);
  };
  const json both = {{{"instance_id", older}, {"state", "running"}, {"run", 0}},
                     {{"instance_id", spot}, {"state", "running"}, {"run", 0}}};
  beat(both);
  const std::string urgent = launch({{"gpus", 4}, {"command", {"sleep", "600"}}});
  // Preempted with the older one, it is placed on the node again before the node says anything.
  ASSERT_TRUE(eventually([&] {
    const json now = instance(spot);
    return now["run"] == 1 && now["node_id"] == node_id;
  })) << instance(spot).dump();

  // Its first run still runs there: the answer stops it, as preempted, and holds the new run back.
  const json work = beat(both);
  auto ids_in = [](const json& items) {
    std::set<std::string> ids;
    for (const json& item : items) ids.insert(item.value("instance_id", ""));
    return ids;
  };
  EXPECT_FALSE(ids_in(work["run"]).contains(spot)) << work.dump();
  EXPECT_TRUE(ids_in(work["run"]).contains(urgent)) << work.dump();
  bool stopped = false;
  for (const json& item : work["stop"]) {
    if (item["instance_id"] != spot) continue;
    stopped = true;
    EXPECT_EQ(item["reason"], "preempted");
    EXPECT_EQ(item["grace_ms"], 6000);
  }
  EXPECT_TRUE(stopped) << work.dump();
  // Its report changed nothing: the instance waits for its new run.
  EXPECT_EQ(instance(spot)["started_at"], json()) << instance(spot).dump();

  // Once it has ended it is forgotten; once the node no longer has it, the new run goes out.
  const json ended =
      beat({{{"instance_id", spot}, {"state", "exited"}, {"signal", 9}, {"run", 0}}});
  EXPECT_TRUE(ended["forget"].dump().find(spot) != std::string::npos) << ended.dump();
  EXPECT_EQ(instance(spot)["started_at"], json()) << instance(spot).dump();
  const json next = beat(json::array());
  bool handed = false;
  for (const json& item : next["run"]) {
    if (item["instance_id"] == spot) handed = item["run"] == 1;
  }
  EXPECT_TRUE(handed) << next.dump();
  start_agent(0);  // It takes its workloads up again, and the test's end stops them all.
}

}  // namespace
}  // namespace allot::testing
