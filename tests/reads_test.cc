// Reads answered off the core thread, from the read view: a read after a write's 2xx sees the
// write; listings filter and page as they always have; other tenants' instances stay invisible;
// a revoked key or a disabled user is refused by the very next read; a restart loses nothing read.
#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class ReadsTest : public ClusterTest {
 protected:
  // Every id a listing gives, page after page of `limit`, with `key`.
  std::vector<std::string> list_all(const std::string& query, const std::string& key,
                                    int limit = 3) {
    std::vector<std::string> ids;
    std::string after;
    for (int pages = 0; pages < 1000; ++pages) {
      const std::string target = "/v1/instances?limit=" + std::to_string(limit) + query +
                                 (after.empty() ? "" : "&after=" + after);
      const ClientResponse got = daemon_.request("GET", target, "", key);
      EXPECT_EQ(got.status, 200) << target << " " << got.body;
      const json page = json::parse(got.body, nullptr, false);
      if (!page.is_object()) break;
      for (const json& item : page["items"]) ids.push_back(item.value("id", ""));
      if (page["next_after"].is_null()) break;
      after = page["next_after"].get<std::string>();
    }
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size()) << "repeated";
    return ids;
  }

  // A second tenant with a project and a member key: {tenant, project, key}.
  std::array<std::string, 3> other_tenant() {
    const std::string tenant = as_operator("POST", "/v1/tenants", {{"name", "rival"}}, 201)["id"];
    const std::string project =
        as_operator("POST", "/v1/projects", {{"name", "p"}, {"tenant_id", tenant}}, 201)["id"];
    const std::string user =
        as_operator("POST", "/v1/users",
                    {{"name", "Rob"}, {"email", "rob@rival"}, {"tenant_id", tenant}}, 201)["id"];
    const std::string key =
        as_operator("POST", "/v1/keys", {{"name", "k"}, {"user_id", user}}, 201)["secret"];
    return {tenant, project, key};
  }

  static std::vector<std::string> sorted(std::vector<std::string> ids) {
    std::sort(ids.begin(), ids.end());
    return ids;
  }
};

TEST_F(ReadsTest, EveryWriteIsSeenByTheReadsSentAfterItsAnswer) {
  constexpr int kThreads = 6;
  constexpr int kEach = 15;
  std::atomic<int> misses{0};
  std::atomic<int> launched{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto client = HttpClient::connect_to(daemon_.url());
      if (!client) return;
      auto send = [&](const std::string& method, const std::string& target,
                      const std::string& body) {
        auto got = (*client)->send(method, target, body, member_key_);
        return got ? *got : ClientResponse{};
      };
      const std::string launch_body = json{
          {"project_id", project_id_},
          {"gpu_milli", 100},
          {"command", {"sleep", "600"}}}.dump();
      for (int i = 0; i < kEach; ++i) {
        const ClientResponse created = send("POST", "/v1/instances", launch_body);
        if (created.status != 201) {
          ++misses;
          continue;
        }
        ++launched;
        const std::string id = json::parse(created.body).value("id", "");
        const ClientResponse got = send("GET", "/v1/instances/" + id, "");
        if (got.status != 200 || json::parse(got.body).value("id", "") != id) ++misses;
        // The newest is last in id order only by chance, so look it up by its project, whole.
        const ClientResponse listed =
            send("GET", "/v1/instances?limit=1000&project_id=" + project_id_, "");
        if (listed.body.find(id) == std::string::npos) ++misses;
        // Stopped at once if it had not started, else asked to stop: either way, seen so.
        const ClientResponse stopped = send("POST", "/v1/instances/" + id + "/stop", "");
        const json after_stop = json::parse(send("GET", "/v1/instances/" + id, "").body);
        if (stopped.status != 200 || !(after_stop.value("stop_requested", false) ||
                                       after_stop.value("state", "") == "stopped")) {
          ++misses;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(launched.load(), kThreads * kEach);
  EXPECT_EQ(misses.load(), 0);
}

TEST_F(ReadsTest, ListingsFilterByTenantProjectNodeAndStateAndPageInIdOrder) {
  const auto [rival, rival_project, rival_key] = other_tenant();
  const std::string my_tenant = call("GET", "/v1/whoami", nullptr, 200)["tenant"].value("id", "");
  const std::string second_project =
      as_operator("POST", "/v1/projects", {{"name", "second"}, {"tenant_id", my_tenant}}, 201)
          .value("id", "");
  ASSERT_FALSE(second_project.empty());
  std::vector<std::string> mine, in_second, stopped;
  for (int i = 0; i < 8; ++i) {
    const std::string project = i % 2 == 0 ? project_id_ : second_project;
    const std::string id =
        call("POST", "/v1/instances",
             {{"project_id", project}, {"gpu_milli", 500}, {"command", {"sleep", "600"}}}, 201)
            .value("id", "");
    mine.push_back(id);
    if (project == second_project) in_second.push_back(id);
    if (i % 4 == 0) {
      call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
      stopped.push_back(id);
    }
  }
  std::vector<std::string> theirs;
  for (int i = 0; i < 3; ++i) {
    const ClientResponse got = daemon_.request(
        "POST", "/v1/instances",
        json{{"project_id", rival_project}, {"gpu_milli", 100}, {"command", {"sleep", "600"}}}
            .dump(),
        rival_key);
    ASSERT_EQ(got.status, 201) << got.body;
    theirs.push_back(json::parse(got.body).value("id", ""));
  }
  for (const std::string& id : stopped) ASSERT_TRUE(instance_reaches(id, "stopped")) << id;
  // Where each ran, or runs: a stopped instance keeps the node it had, if it had one.
  std::map<std::string, std::vector<std::string>> by_node, running_on;
  for (const std::string& id : mine) {
    const bool was_stopped = std::ranges::find(stopped, id) != stopped.end();
    if (!was_stopped) {
      ASSERT_TRUE(instance_reaches(id, "running")) << id;
    }
    const std::string node = instance(id).value("node_id", "");
    by_node[node].push_back(id);
    if (!was_stopped) running_on[node].push_back(id);
  }

  EXPECT_EQ(list_all("", member_key_), sorted(mine));
  EXPECT_EQ(list_all("&project_id=" + second_project, member_key_), sorted(in_second));
  EXPECT_EQ(list_all("&state=stopped", member_key_), sorted(stopped));
  EXPECT_EQ(list_all("&state=stopped&project_id=" + project_id_, member_key_, 1),
            sorted(stopped));  // Every stopped one is in the first project.
  for (const auto& [node, ids] : by_node) {
    EXPECT_EQ(list_all("&node_id=" + node, member_key_), sorted(ids)) << node;
    EXPECT_EQ(list_all("&node_id=" + node + "&state=running", member_key_),
              sorted(running_on[node]));
  }
  EXPECT_TRUE(list_all("&state=queued", member_key_).empty());

  // The rival sees only its own, whatever it asks for; the operator sees both, or one.
  EXPECT_EQ(list_all("", rival_key), sorted(theirs));
  EXPECT_TRUE(list_all("&tenant_id=" + my_tenant, rival_key).empty());
  EXPECT_TRUE(list_all("&project_id=" + project_id_, rival_key).empty());
  EXPECT_EQ(list_all("&tenant_id=" + rival, daemon_.admin_key(), 2), sorted(theirs));
  std::vector<std::string> everyone = mine;
  everyone.insert(everyone.end(), theirs.begin(), theirs.end());
  EXPECT_EQ(list_all("", daemon_.admin_key(), 100), sorted(everyone));
  for (const std::string& id : mine) {
    const ClientResponse got = daemon_.request("GET", "/v1/instances/" + id, "", rival_key);
    EXPECT_EQ(got.status, 404) << got.body;
    EXPECT_NE(got.body.find("not_found"), std::string::npos);
    EXPECT_EQ(got.body.find("sleep"), std::string::npos);
  }
}

TEST_F(ReadsTest, BadReadsGetTheirCodesAndNodesStayTheOperatorsOwn) {
  const std::string id =
      launch({{"project_id", project_id_}, {"gpu_milli", 100}, {"command", {"sleep", "600"}}});
  const std::string node = nodes().at(0).value("id", "");
  struct Case {
    std::string method, target, key;
    int status;
    std::string code;
  };
  const std::string member = member_key_;
  const std::vector<Case> cases = {
      {"GET", "/v1/instances/not-an-id", member, 400, "invalid_id"},
      {"GET", "/v1/instances/ins_0000000000000000", member, 404, "not_found"},
      {"GET", "/v1/instances?colour=red", member, 400, "unknown_field"},
      {"GET", "/v1/instances?state=sleeping", member, 400, "invalid_argument"},
      {"GET", "/v1/instances?limit=0", member, 400, "invalid_argument"},
      {"GET", "/v1/instances?limit=abc", member, 400, "invalid_argument"},
      {"GET", "/v1/instances/" + id, "", 401, "unauthenticated"},
      {"GET", "/v1/instances", "allot_" + std::string(40, '0'), 401, "unauthenticated"},
      {"DELETE", "/v1/instances/" + id, member, 405, "method_not_allowed"},
      {"PUT", "/v1/nodes", member, 405, "method_not_allowed"},
      {"GET", "/v1/nodes", member, 403, "forbidden"},
      {"GET", "/v1/nodes/" + node, member, 403, "forbidden"},
      {"GET", "/v1/nodes/nod_0000000000000000", daemon_.admin_key(), 404, "not_found"},
      {"GET", "/v1/nodes?state=asleep", daemon_.admin_key(), 400, "invalid_argument"},
  };
  for (const Case& c : cases) {
    const ClientResponse got = daemon_.request(c.method, c.target, "", c.key);
    EXPECT_EQ(got.status, c.status) << c.method << " " << c.target << " " << got.body;
    EXPECT_NE(got.body.find("\"" + c.code + "\""), std::string::npos) << c.target << got.body;
  }
  const json one = as_operator("GET", "/v1/nodes/" + node, nullptr, 200);
  EXPECT_EQ(one.value("id", ""), node);
  EXPECT_EQ(as_operator("GET", "/v1/nodes?limit=1", nullptr, 200)["items"].size(), 1u);
}

TEST_F(ReadsTest, ARevokedKeyOrADisabledUserIsRefusedByTheVeryNextRead) {
  const std::string id =
      launch({{"project_id", project_id_}, {"gpu_milli", 100}, {"command", {"sleep", "600"}}});
  const std::string user = call("GET", "/v1/whoami", nullptr, 200)["user"].value("id", "");
  ASSERT_FALSE(user.empty());
  for (int i = 0; i < 10; ++i) {
    const json key = as_operator("POST", "/v1/keys", {{"name", "k"}, {"user_id", user}}, 201);
    const std::string secret = key.value("secret", "");
    EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + id, "", secret).status, 200);
    as_operator("DELETE", "/v1/keys/" + key.value("id", ""), nullptr, 200);
    EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + id, "", secret).status, 401);
    EXPECT_EQ(daemon_.request("GET", "/v1/instances", "", secret).status, 401);
  }
  as_operator("PATCH", "/v1/users/" + user, {{"disabled", true}}, 200);
  EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + id, "", member_key_).status, 401);
  as_operator("PATCH", "/v1/users/" + user, {{"disabled", false}}, 200);
  EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + id, "", member_key_).status, 200);
}

TEST_F(ReadsTest, AfterAKillEveryAcknowledgedInstanceIsReadBackAsItWasLeft) {
  std::vector<std::string> ids;
  ids.reserve(5);
  for (int i = 0; i < 5; ++i) {
    ids.push_back(
        launch({{"project_id", project_id_}, {"gpu_milli", 100}, {"command", {"sleep", "600"}}}));
  }
  call("POST", "/v1/instances/" + ids.back() + "/stop", nullptr, 200);
  const json left = instance(ids.back());
  daemon_.kill();
  ASSERT_TRUE(daemon_.start_on_same_port());
  EXPECT_EQ(list_all("", member_key_), sorted(ids));
  const json back = instance(ids.back());
  EXPECT_TRUE(back.value("stop_requested", false) || back.value("state", "") == "stopped")
      << back.dump();
  EXPECT_EQ(back.value("created_at", ""), left.value("created_at", ""));
}

}  // namespace
}  // namespace allot::testing
