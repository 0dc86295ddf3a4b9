// Node pools end to end: allotd's autoscaler grows a pool of real allot-agent processes (the
// local provider) for queued work, the work runs, and the pool shrinks back to its minimum once
// the work is done, stopping none of it. Failing, hanging and babbling create scripts are counted
// failures, and the other pools keep scaling.
#include <signal.h>

#include <set>

#include <chrono>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "store/store.h"
#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class PoolTest : public ClusterTest {
 protected:
  PoolTest() {
    agent_count_ = 0;  // Every node comes from a pool.
    extra_daemon_args_ = {"--autoscale-interval-ms",   "200",
                          "--pool-command-timeout-ms", "1500",
                          "--local-agent-path",        bin_dir() + "/src/agent/allot-agent"};
  }

  // allotd stops the agents it started for its local pools when it stops.
  void TearDown() override {
    ClusterTest::TearDown();
    EXPECT_EQ(daemon_.stop(), 0);
  }

  json pool(const std::string& id) { return as_operator("GET", "/v1/pools/" + id, nullptr, 200); }

  std::vector<json> events(const std::string& kind) {
    std::vector<json> out;
    const json list = as_operator("GET", "/v1/events?limit=1000", nullptr, 200);
    for (const json& e : list["items"]) {
      if (e["kind"] == kind) out.push_back(e);
    }
    return out;
  }

  static json local_pool(const std::string& name, int max_nodes) {
    return {{"name", name},           {"gpu_model", "H100-80GB"}, {"min_nodes", 0},
            {"max_nodes", max_nodes}, {"provider", "local"},      {"gpus_per_node", 2},
            {"cpu_milli", 8'000},     {"memory_mib", 16'384},     {"idle_timeout_s", 2},
            {"boot_timeout_s", 60},   {"cooldown_s", 0}};
  }
};

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST_F(PoolTest, QueuedWorkGrowsAPoolOfRealAgentsThatShrinksBackWhenTheWorkIsDone) {
  const std::string id = as_operator("POST", "/v1/pools", local_pool("burst", 2), 201)["id"];
  EXPECT_EQ(pool(id)["live_nodes"], 0);
  std::vector<std::string> jobs;
  jobs.reserve(3);
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(launch({{"gpus", 2}, {"command", {"sh", "-c", "sleep 2; echo done"}}}));
  }
  // Two nodes (the maximum) boot, join and take the work; the third job runs after one ends.
  std::set<pid_t> agents;
  ASSERT_TRUE(eventually([&] {
    const json p = pool(id);
    int ready = 0;
    for (const json& n : p["nodes"]) {
      if (n["state"] != "ready") continue;
      ++ready;
      const std::string ref = n["provider_ref"];
      if (ref.starts_with("local:")) agents.insert(std::stoi(ref.substr(6)));
    }
    return ready == 2;
  })) << pool(id).dump();
  EXPECT_EQ(pool(id)["live_nodes"], 2);
  EXPECT_EQ(agents.size(), 2U);
  for (pid_t pid : agents) EXPECT_TRUE(process_alive(pid)) << pid;
  int labelled = 0;
  const json all = nodes();
  for (const json& node : all) labelled += node["labels"].value("pool", "") == "burst" ? 1 : 0;
  EXPECT_EQ(labelled, 2);
  for (const std::string& job : jobs) {
    EXPECT_TRUE(instance_reaches(job, "succeeded")) << instance(job).dump();
    EXPECT_EQ(logs(job), "done\n");
  }
  // Idle for two seconds, both nodes go: cordoned, their agents stopped, the pool back at zero.
  ASSERT_TRUE(eventually([&] { return pool(id)["live_nodes"] == 0; })) << pool(id).dump();
  const json emptied = pool(id);
  for (const json& n : emptied["nodes"]) EXPECT_EQ(n["state"], "deleted") << n.dump();
  for (pid_t pid : agents) EXPECT_FALSE(process_alive(pid)) << pid;
  // The deleted nodes leave the fleet and /metrics, and stay in the store for the books.
  EXPECT_TRUE(nodes().empty()) << nodes().dump();
  EXPECT_EQ(metric_sum("allot_nodes"), 0);
  const json kept = as_operator("GET", "/v1/nodes?include_deleted=true", nullptr, 200)["items"];
  ASSERT_EQ(kept.size(), 2U);
  for (const json& n : kept) EXPECT_EQ(n["state"], "deleted") << n.dump();
  for (const std::string& job : jobs) EXPECT_EQ(instance(job)["state"], "succeeded");
  // Every decision is an event with its reason.
  const auto ups = events("pool.scale_up");
  ASSERT_EQ(ups.size(), 2U);
  EXPECT_NE(ups[0]["data"].value("reason", "").find("queued instances fit no node"),
            std::string::npos)
      << ups[0].dump();
  const auto downs = events("pool.scale_down");
  ASSERT_EQ(downs.size(), 2U);
  EXPECT_EQ(downs[0]["data"]["reason"], "idle for 2 s");
  EXPECT_EQ(events("pool.node_joined").size(), 2U);
  EXPECT_EQ(events("pool.node_deleted").size(), 2U);
  // With no nodes left the pool may go.
  EXPECT_EQ(as_operator("DELETE", "/v1/pools/" + id, nullptr, 200)["deleted_at"].is_string(), true);
  as_operator("GET", "/v1/pools/" + id, nullptr, 404);
}

// Three days of finished work in a daily cycle, written into allotd's store while it is down: on
// the next start the forecast sees the demand to come and grows the pool with nothing queued.
TEST_F(PoolTest, HistoryInTheStoreGrowsAPoolAheadOfTheForecastDemandWithNothingQueued) {
  const json project = as_operator("GET", "/v1/projects/" + project_id_, nullptr, 200);
  ASSERT_EQ(daemon_.stop(), 0);
  {
    auto store = open_sqlite_store((daemon_.data_dir() / "allot.db").string());
    ASSERT_TRUE(store) << store.error().message;
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    constexpr int64_t kHour = 3'600'000;
    const int64_t hour_ms = now_ms - (now_ms % kHour);
    Batch batch;
    for (int h = 72; h >= 1; --h) {
      // 4 to 12 GPUs a day, busiest an hour from now.
      const double phase = 2 * std::numbers::pi * (1 - h) / 24.0;
      Instance done{.id = fmt::format("ins_{:016x}", h),
                    .tenant_id = project["tenant_id"],
                    .project_id = project_id_,
                    .user_id = "usr_0000000000000001",
                    .state = InstanceState::kSucceeded,
                    .created_at_ms = hour_ms - (h * kHour),
                    .started_at_ms = hour_ms - (h * kHour),
                    .ended_at_ms = hour_ms - ((h - 1) * kHour)};
      done.spec.gpus = static_cast<int>(std::lround(8 + (4 * std::cos(phase))));
      done.spec.command = {"true"};
      batch.rows.emplace_back(done);
    }
    ASSERT_TRUE((*store)->commit(batch));
  }
  ASSERT_TRUE(daemon_.start());
  json warm = local_pool("warm", 3);
  warm["gpus_per_node"] = 8;
  warm["idle_timeout_s"] = 600;
  const std::string id = as_operator("POST", "/v1/pools", warm, 201)["id"];
  ASSERT_TRUE(eventually([&] { return pool(id)["live_nodes"] >= 1; })) << pool(id).dump();
  const auto ups = events("pool.scale_up");
  ASSERT_FALSE(ups.empty());
  EXPECT_NE(ups[0]["data"].value("reason", "").find("the forecast wants"), std::string::npos)
      << ups[0].dump();
  EXPECT_TRUE(as_operator("GET", "/v1/instances?state=queued", nullptr, 200)["items"].empty());
}

TEST_F(PoolTest, BadPoolsAreRefusedWithStableCodesAndChangeNothing) {
  struct Case {
    const char* what;
    json change;
    int status;
    const char* code;
  };
  const Case cases[] = {
      {"min above max", {{"min_nodes", 3}, {"max_nodes", 2}}, 400, "invalid_argument"},
      {"unknown provider", {{"provider", "cloud9"}}, 400, "invalid_argument"},
      {"unknown model", {{"gpu_model", "Z9000"}}, 400, "invalid_argument"},
      {"command without scripts", {{"provider", "command"}}, 400, "invalid_argument"},
      {"negative max", {{"max_nodes", -1}}, 400, "invalid_argument"},
      {"unknown field", {{"colour", "blue"}}, 400, "unknown_field"},
      {"wrong type", {{"max_nodes", "two"}}, 400, "invalid_type"},
  };
  for (const Case& c : cases) {
    json body = local_pool("p", 2);
    body.update(c.change);
    const json answer = as_operator("POST", "/v1/pools", body, c.status);
    EXPECT_EQ(answer["error"]["code"], c.code) << c.what << ": " << answer.dump();
  }
  json missing = local_pool("p", 2);
  missing.erase("max_nodes");
  EXPECT_EQ(as_operator("POST", "/v1/pools", missing, 400)["error"]["code"], "missing_field");
  EXPECT_TRUE(as_operator("GET", "/v1/pools", nullptr, 200)["items"].empty());
  // A tenant's key may not touch pools.
  EXPECT_EQ(call("POST", "/v1/pools", local_pool("p", 2), 403)["error"]["code"], "forbidden");
  const std::string id = as_operator("POST", "/v1/pools", local_pool("p", 2), 201)["id"];
  EXPECT_EQ(as_operator("PATCH", "/v1/pools/" + id, {{"min_nodes", 5}}, 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(pool(id)["min_nodes"], 0);
  EXPECT_EQ(as_operator("PATCH", "/v1/pools/" + id, {{"max_nodes", 4}}, 200)["max_nodes"], 4);
}

TEST_F(PoolTest, FailingHangingAndBabblingScriptsAreCountedAndOtherPoolsKeepScaling) {
  auto command_pool = [](const std::string& name, const std::string& model,
                         const std::string& create) {
    return json{{"name", name},
                {"gpu_model", model},
                {"max_nodes", 1},
                {"provider", "command"},
                {"gpus_per_node", 1},
                {"create_command", create},
                {"delete_command", "true"},
                {"boot_timeout_s", 30},
                {"cooldown_s", 0}};
  };
  const std::string fails =
      as_operator("POST", "/v1/pools",
                  command_pool("fails", "A100-80GB", "echo no capacity >&2; exit 3"), 201)["id"];
  const std::string hangs =
      as_operator("POST", "/v1/pools", command_pool("hangs", "L40S-48GB", "sleep 60"), 201)["id"];
  const std::string babbles =
      as_operator("POST", "/v1/pools",
                  command_pool("babbles", "L4-24GB", "printf '{{ not json\\nat all'"), 201)["id"];
  const std::string works = as_operator("POST", "/v1/pools", local_pool("works", 1), 201)["id"];
  launch({{"gpus", 1}, {"gpu_models", {"A100-80GB"}}, {"command", {"true"}}});
  launch({{"gpus", 1}, {"gpu_models", {"L40S-48GB"}}, {"command", {"true"}}});
  launch({{"gpus", 1}, {"gpu_models", {"L4-24GB"}}, {"command", {"true"}}});
  const std::string job =
      launch({{"gpus", 1}, {"gpu_models", {"H100-80GB"}}, {"command", {"echo", "ran"}}});
  EXPECT_TRUE(instance_reaches(job, "succeeded")) << instance(job).dump();
  for (const std::string& id : {fails, hangs, babbles}) {
    ASSERT_TRUE(eventually([&] { return pool(id)["boot_failures"] >= 1; })) << pool(id).dump();
  }
  std::map<std::string, std::string> why;
  for (const json& e : events("pool.boot_failed")) why[e["data"]["pool"]] = e["data"]["reason"];
  EXPECT_NE(why["fails"].find("exited with 3: no capacity"), std::string::npos) << why["fails"];
  EXPECT_NE(why["hangs"].find("did not finish within 1 s"), std::string::npos) << why["hangs"];
  EXPECT_NE(why["babbles"].find("not one machine name"), std::string::npos) << why["babbles"];
  EXPECT_EQ(pool(works)["boot_failures"], 0);
}

}  // namespace
}  // namespace allot::testing
