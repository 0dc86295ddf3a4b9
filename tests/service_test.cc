// Services under a real allotd and three agents: a small HTTP server as a service whose replicas
// answer through /s/SERVICE/ with the tenant's key (and nobody else's), grow under load, go to
// zero when it stops, wake for the next request (held while a replica starts), and roll over to
// a new revision without a failed request; a revision that never gets ready stops its rollout
// while the old one serves on; a replica that stops answering its probes is restarted.
#include <atomic>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "common/asio.h"
#include "service_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

TEST_F(ServiceTest, AServiceAnswersGrowsSleepsWakesAndRollsOverWithoutAFailedRequest) {
  // Made with the CLI, as a tenant member would.
  const RunResult made = cli({"services",
                              "create",
                              "echo",
                              "--gpus",
                              "8",
                              "--port",
                              std::to_string(port_),
                              "--replicas",
                              "2:3",
                              "--target-concurrency",
                              "2",
                              "--scale-to-zero-after",
                              "10s",
                              "--readiness",
                              "/health",
                              "--model",
                              "echo-1",
                              "--env",
                              "VERSION=1",
                              "--",
                              "python3",
                              script_,
                              std::to_string(port_)},
                             member_key_);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  EXPECT_NE(made.out.find("url:       /s/svc_"), std::string::npos) << made.out;
  ASSERT_TRUE(eventually([&] {
    const json s = service("echo");
    return s["ready_replicas"] == 2 && s["rollout"]["state"] == "done";
  })) << service("echo").dump(2);
  const json first = service("echo");
  EXPECT_EQ(first["serving_revision"], 1);

  // Through its URL, by id or name, with the tenant's key; the key never reaches the replica;
  // requests one after another go to both replicas.
  std::set<std::string> answered_by;
  for (int i = 0; i < 6; ++i) {
    const Answer a = get("/s/echo/hello?x=1", member_key_);
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.body, "v1 /hello auth=-");
    answered_by.insert(a.replica);
  }
  EXPECT_EQ(answered_by.size(), 2U);
  EXPECT_EQ(get(fmt::format("/s/{}/hello", first["id"].get<std::string>()), member_key_).status,
            200);
  EXPECT_EQ(get("/s/echo", member_key_).status, 308);

  // Nobody else: no key, a bad key, another tenant's key, a service that is not there.
  const Answer anonymous = get("/s/echo/hello", "");
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  EXPECT_EQ(error_code(anonymous), "unauthenticated");
  EXPECT_EQ(get("/s/echo/hello", "not-a-key").status, 401);
  const std::string stranger = stranger_key();
  EXPECT_EQ(get("/s/echo/hello", stranger).status, 404);
  EXPECT_EQ(get(fmt::format("/s/{}/hello", first["id"].get<std::string>()), stranger).status, 404);
  call_with(stranger, "GET", "/v1/services/echo", "", 404);
  EXPECT_EQ(get("/s/nothing/hello", member_key_).status, 404);

  // OpenAI-style: routed by the body's model to the service that declares it.
  const ClientResponse chat = daemon_.request(
      "POST", "/v1/chat/completions",
      json{{"model", "echo-1"}, {"messages", {{{"role", "user"}, {"content", "say hi now"}}}}}
          .dump(),
      member_key_);
  ASSERT_EQ(chat.status, 200) << chat.body;
  const json completion = json::parse(chat.body);
  EXPECT_EQ(completion["path"], "/v1/chat/completions");
  EXPECT_EQ(completion["usage"]["total_tokens"], 4);
  const json models = call_with(member_key_, "GET", "/v1/models", "", 200);
  ASSERT_EQ(models["data"].size(), 1U) << models.dump();
  EXPECT_EQ(models["data"][0]["id"], "echo-1");
  // One model by its id, as the OpenAI client retrieves it; none of another tenant's.
  const json model = call_with(member_key_, "GET", "/v1/models/echo-1", "", 200);
  EXPECT_EQ(model["id"], "echo-1");
  EXPECT_EQ(model["object"], "model");
  EXPECT_EQ(model["owned_by"], "echo");
  call_with(member_key_, "GET", "/v1/models/gpt-9", "", 404);
  call_with(stranger, "GET", "/v1/models/echo-1", "", 404);
  EXPECT_EQ(daemon_.request("GET", "/v1/models/echo-1", "", "").status, 401);
  EXPECT_EQ(
      daemon_.request("POST", "/v1/chat/completions", R"({"model": "gpt-9"})", member_key_).status,
      404);
  EXPECT_EQ(
      daemon_.request("POST", "/v1/chat/completions", R"({"messages": []})", member_key_).status,
      400);
  EXPECT_EQ(
      daemon_.request("POST", "/v1/chat/completions", R"({"model": "echo-1"})", stranger).status,
      404);
  EXPECT_EQ(daemon_.request("POST", "/v1/chat/completions", R"({"model": "echo-1"})", "").status,
            401);

  // A service key, as the tenant gives one to its own customer: this service's endpoint, by path
  // or by model, and nothing else; revoked, nothing at all.
  const json issued =
      call_with(member_key_, "POST", "/v1/services/echo/keys", R"({"name": "acme"})", 201);
  const std::string caller = issued["secret"];
  EXPECT_TRUE(caller.starts_with("allot_svc_")) << issued.dump();
  EXPECT_EQ(get("/s/echo/hello", caller).body, "v1 /hello auth=-");
  EXPECT_EQ(
      daemon_.request("POST", "/v1/chat/completions", R"({"model": "echo-1"})", caller).status,
      200);
  call_with(caller, "GET", "/v1/services", "", 401);
  call_with(caller, "GET", "/v1/instances", "", 401);
  call_with(caller, "POST", "/v1/services/echo/keys", R"({"name": "more"})", 401);
  const json key_list = call_with(member_key_, "GET", "/v1/services/echo/keys", "", 200);
  ASSERT_EQ(key_list["items"].size(), 1U);
  EXPECT_FALSE(key_list["items"][0].contains("secret"));
  call_with(stranger, "DELETE", "/v1/services/echo/keys/" + issued["id"].get<std::string>(), "",
            404);
  call_with(member_key_, "DELETE", "/v1/services/echo/keys/" + issued["id"].get<std::string>(), "",
            200);
  EXPECT_EQ(get("/s/echo/hello", caller).status, 401);

  // Load: eight requests at a time, each half a second, against two in flight per replica.
  std::atomic<bool> loading{true};
  std::atomic<int> failures{0};
  std::vector<std::thread> load;
  load.reserve(8);
  for (int i = 0; i < 8; ++i) {
    load.emplace_back([&] {
      while (loading) {
        if (get("/s/echo/slow?sleep=0.5", member_key_).status != 200) ++failures;
      }
    });
  }
  EXPECT_TRUE(eventually([&] { return service("echo")["ready_replicas"] == 3; }))
      << service("echo").dump(2);
  loading = false;
  for (std::thread& t : load) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_NE(service("echo")["scale_reason"].get<std::string>().find("in flight"), std::string::npos)
      << service("echo").dump(2);

  // Quiet for ten seconds: no replicas at all.
  ASSERT_TRUE(eventually([&] {
    const json s = service("echo");
    return s["desired"] == 0 && s["replicas"].empty();
  })) << service("echo").dump(2);
  EXPECT_EQ(service("echo")["scale_reason"], "no request for 10 s");

  // The next request waits while a replica starts, and is answered.
  const Answer woken = get("/s/echo/hello", member_key_);
  EXPECT_EQ(woken.status, 200) << woken.body;
  EXPECT_EQ(woken.body, "v1 /hello auth=-");
  ASSERT_TRUE(eventually([&] { return service("echo")["ready_replicas"] >= 2; }));

  // A rolling update under steady requests: every replica replaced, no request failed (with
  // three replicas on three nodes, one old replica makes room for each new one).
  std::atomic<int> seen_v2{0};
  loading = true;
  std::thread steady([&] {
    while (loading) {
      const Answer a = get("/s/echo/hello", member_key_);
      if (a.status != 200) {
        ++failures;
        ADD_FAILURE() << a.status << " " << a.body;
      } else if (a.body.starts_with("v2")) {
        ++seen_v2;
      }
    }
  });
  call_with(member_key_, "PATCH", "/v1/services/echo", json{{"replica", replica("2")}}.dump(), 200);
  const bool rolled = eventually([&] {
    const json s = service("echo");
    if (s["serving_revision"] != 2 || s["replicas"].size() != s["desired"]) return false;
    return std::ranges::all_of(s["replicas"], [](const json& r) { return r["revision"] == 2; });
  });
  loading = false;
  steady.join();
  ASSERT_TRUE(rolled) << service("echo").dump(2);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(seen_v2, 0);
  EXPECT_EQ(get("/s/echo/hello", member_key_).body, "v2 /hello auth=-");
  const RunResult shown = cli({"services", "show", "echo"}, member_key_);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("revision:  2, rollout done"), std::string::npos) << shown.out;
  // An update of one field keeps the rest of the running revision: its command and GPUs stay.
  const RunResult updated =
      cli({"-o", "json", "services", "update", "echo", "--env", "NOTE=kept"}, member_key_);
  ASSERT_EQ(updated.exit_code, 0) << updated.err;
  const json latest = json::parse(updated.out)["revisions"].back()["spec"];
  EXPECT_EQ(latest["command"], replica("2")["command"]) << latest.dump();
  EXPECT_EQ(latest["gpus"], 8) << latest.dump();
  EXPECT_EQ(latest["env"], json({{"VERSION", "2"}, {"NOTE", "kept"}})) << latest.dump();

  // Deleted: its replicas stop and its URL is gone.
  call_with(member_key_, "DELETE", "/v1/services/echo", "", 200);
  EXPECT_TRUE(eventually([&] { return get("/s/echo/hello", member_key_).status == 404; }));
  const json listed = call_with(member_key_, "GET", "/v1/instances?state=running", "", 200);
  EXPECT_TRUE(eventually([&] {
    return call_with(member_key_, "GET", "/v1/instances?state=running", "", 200)["items"].empty();
  })) << listed.dump(2);
}

TEST_F(ServiceTest, ARevisionThatNeverGetsReadyStopsItsRolloutAndTheOldOneServesOn) {
  json body = {{"name", "steady"},       {"port", port_},     {"readiness", "/health"},
               {"min_replicas", 1},      {"max_replicas", 2}, {"ready_timeout_s", 3},
               {"replica", replica("1")}};
  call_with(member_key_, "POST", "/v1/services", body.dump(), 201);
  ASSERT_TRUE(eventually([&] { return service("steady")["ready_replicas"] == 1; }));
  call_with(member_key_, "PATCH", "/v1/services/steady",
            json{{"replica", replica("2", false)}}.dump(), 200);
  ASSERT_TRUE(eventually([&] { return service("steady")["rollout"]["state"] == "failed"; }))
      << service("steady").dump(2);
  const json s = service("steady");
  EXPECT_NE(s["rollout"]["reason"].get<std::string>().find("was not ready within 3 s"),
            std::string::npos)
      << s.dump(2);
  EXPECT_NE(s["rollout"]["reason"].get<std::string>().find("answered 503"), std::string::npos)
      << s.dump(2);
  EXPECT_EQ(s["serving_revision"], 1);
  EXPECT_EQ(get("/s/steady/hello", member_key_).body, "v1 /hello auth=-");
  EXPECT_TRUE(eventually([&] {
    const json now = service("steady");
    return now["replicas"].size() == 1 && now["replicas"][0]["revision"] == 1;
  })) << service("steady").dump(2);

  // A replica that stops answering its probes after it was ready is restarted, and counted.
  const std::string sick = service("steady")["replicas"][0]["instance_id"];
  const int64_t restarts = service("steady")["restarts"];
  EXPECT_EQ(get("/s/steady/sicken", member_key_).body, "sick");
  ASSERT_TRUE(eventually([&] {
    const json now = service("steady");
    return now["restarts"] == restarts + 1 && now["ready_replicas"] == 1 &&
           now["replicas"][0]["instance_id"] != sick;
  })) << service("steady").dump(2);
  EXPECT_EQ(get("/s/steady/hello", member_key_).body, "v1 /hello auth=-");

  // A service at zero whose replica no node can take: a request waits its bounded time and is
  // told why, with when to try again.
  json nowhere = replica("1");
  nowhere["gpu_models"] = {"A100-80GB"};  // The agents simulate H100s only.
  call_with(member_key_, "POST", "/v1/services",
            json{{"name", "idle"},
                 {"port", port_},
                 {"min_replicas", 0},
                 {"scale_to_zero_after_s", 10},
                 {"replica", nowhere}}
                .dump(),
            201);
  EXPECT_EQ(service("idle")["desired"], 0);
  EXPECT_TRUE(service("idle")["replicas"].empty());
  const Answer waited = get("/s/idle/hello", member_key_);
  EXPECT_EQ(waited.status, 503) << waited.body;
  EXPECT_EQ(waited.retry_after, "5");
  EXPECT_NE(waited.body.find("no replica of service idle was ready within 8 s: replica ins_"),
            std::string::npos)
      << waited.body;
  EXPECT_NE(waited.body.find("is queued"), std::string::npos) << waited.body;

  // A key of this service reaches no other service of the tenant.
  const std::string caller =
      call_with(member_key_, "POST", "/v1/services/steady/keys", R"({"name": "a"})", 201)["secret"];
  EXPECT_EQ(get("/s/steady/hello", caller).status, 200);
  EXPECT_EQ(get("/s/idle/hello", caller).status, 404);
  call_with(member_key_, "DELETE", "/v1/services/idle", "", 200);

  // Careless input: each refused with its code, nothing made.
  auto refused = [&](json fields, const std::string& code) {
    json bad = body;
    bad["name"] = "other";
    for (auto& [k, v] : fields.items()) bad[k] = v;
    const ClientResponse answer = daemon_.request("POST", "/v1/services", bad.dump(), member_key_);
    const json error = json::parse(answer.body, nullptr, false);
    EXPECT_EQ(error.is_object() ? error["error"].value("code", "") : "", code)
        << fields.dump() << " " << answer.body;
  };
  refused({{"name", "steady"}}, "already_exists");
  refused({{"min_replicas", 3}}, "invalid_argument");
  refused({{"port", 0}}, "invalid_argument");
  refused({{"readiness", "health"}}, "invalid_argument");
  refused({{"target_rps", 5}, {"target_concurrency", 5}}, "invalid_argument");
  refused({{"scale_to_zero_after_s", 2}}, "invalid_argument");
  refused({{"replica", {{"gpus", 1}, {"nodes", 2}, {"command", {"true"}}}}}, "invalid_argument");
  refused({{"replica", {{"gpus", 1}}}}, "missing_field");
  refused({{"surprise", 1}}, "unknown_field");
  EXPECT_EQ(call_with(member_key_, "GET", "/v1/services", "", 200)["items"].size(), 1U);
}

}  // namespace
}  // namespace allot::testing
