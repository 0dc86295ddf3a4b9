// A shared service billed per use under a real allotd and agents: another tenant makes a caller
// key of its own, calls the service by its model, and pays per answered request and per token
// (from the answers' usage, a stream's last event or the X-Allot-Tokens header) from its prepaid
// balance, as its invoice shows to the micro; an answer whose usage cannot be read is counted
// and not billed; a caller whose money is gone is answered 402, and what it could not pay is owed
// on its invoice; the service's tenant sees its margin. Nobody else reaches or sees any of it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/money.h"
#include "service_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class ServiceBillingTest : public ServiceTest {
 protected:
  // A price rise reaches callers 3 s after they are told, not a day.
  ServiceBillingTest() {
    extra_daemon_args_.insert(extra_daemon_args_.end(), {"--service-price-notice-s", "3"});
  }

  // A tenant of its own with a member's key: the caller.
  struct Tenant {
    std::string id;
    std::string key;
  };
  Tenant caller_tenant(const std::string& name) {
    const json tenant = as_operator("POST", "/v1/tenants", {{"name", name}}, 201);
    const json user = as_operator(
        "POST", "/v1/users",
        {{"name", name}, {"email", name + "@example.com"}, {"tenant_id", tenant["id"]}}, 201);
    return Tenant{.id = tenant["id"],
                  .key = as_operator("POST", "/v1/keys", {{"name", "k"}, {"user_id", user["id"]}},
                                     201)["secret"]};
  }

  ClientResponse chat(const std::string& key, json extra) {
    json body = {{"model", "chat-1"}, {"messages", {{{"role", "user"}, {"content", "a b c"}}}}};
    for (auto& [k, v] : extra.items()) body[k] = v;
    return daemon_.request("POST", "/v1/chat/completions", body.dump(), key);
  }
};

TEST_F(ServiceBillingTest, ACallerPaysPerRequestAndTokenExactlyAndIsRefusedWhenItsMoneyIsGone) {
  const std::string region = nodes().at(0)["region"];
  // 3.6 a GPU-hour, from the next whole second: the replicas' GPU time costs the service's tenant.
  const json price =
      as_operator("PUT", "/v1/prices",
                  {{"gpu_model", "H100-80GB"}, {"region", region}, {"gpu_hour", "3.6"}}, 200);
  const TimeMs priced_from_ms = *parse_time(price.value("effective_at", "")) + 1'000;
  while (SystemClock().now_ms() < priced_from_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const RunResult made = cli({"services",
                              "create",
                              "chat",
                              "--gpus",
                              "8",
                              "--port",
                              std::to_string(port_),
                              "--replicas",
                              "1",
                              "--readiness",
                              "/health",
                              "--model",
                              "chat-1",
                              "--price-per-request",
                              "0.001",
                              "--price-per-1k-tokens",
                              "0.5",
                              "--",
                              "python3",
                              script_,
                              std::to_string(port_)},
                             member_key_);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  ASSERT_TRUE(eventually([&] { return service("chat")["ready_replicas"] == 1; }))
      << service("chat").dump(2);
  const std::string id = service("chat")["id"];
  const std::string keys = "/v1/services/" + id + "/keys";

  // The caller: prepaid, with one unit of money.
  const Tenant buyer = caller_tenant("buyer");
  as_operator("PATCH", "/v1/tenants/" + buyer.id, {{"billing", "prepaid"}}, 200);
  as_operator("POST", "/v1/tenants/" + buyer.id + "/topups", {{"amount", "1"}}, 201);

  // Not shared yet: to another tenant the service is not there.
  call_with(buyer.key, "POST", keys, R"({"name": "app"})", 404);
  // Nor by a guessed name, nor in the list of what is shared with it.
  call_with(buyer.key, "GET", "/v1/services/chat", "", 404);
  call_with(buyer.key, "POST", "/v1/services/chat/keys", R"({"name": "app"})", 404);
  EXPECT_TRUE(call_with(buyer.key, "GET", "/v1/services?shared=true", "", 200)["items"].empty());
  call_with(buyer.key, "GET", "/v1/services?shared=maybe", "", 400);
  call_with(buyer.key, "GET", "/v1/services?shared=true&tenant_id=" + buyer.id, "", 400);
  const RunResult shared = cli({"services", "update", "chat", "--shared", "yes"}, member_key_);
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_NE(shared.out.find("other tenants may call it, paying 0.001000 per request"),
            std::string::npos)
      << shared.out;
  // The caller finds it among the services shared with its tenant, and makes its key by name.
  const RunResult found = cli({"services", "list", "--shared"}, buyer.key);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_NE(found.out.find(id), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("0.001000"), std::string::npos) << found.out;
  EXPECT_EQ(json::parse(cli({"-o", "json", "services", "list", "--shared"}, member_key_).out),
            json::array());  // Its own tenant's services are not "shared with" it.
  const RunResult issued =
      cli({"-o", "json", "services", "keys", "create", "chat", "app"}, buyer.key);
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  const json key = json::parse(issued.out);
  EXPECT_EQ(key["caller_tenant_id"], buyer.id);
  EXPECT_EQ(key["billed"], true);
  const std::string caller = key["secret"];
  // The caller's view of the service has fewer fields: the CLI shows it, and never aborts.
  const RunResult shown_to_caller = cli({"services", "show", id}, buyer.key);
  EXPECT_EQ(shown_to_caller.exit_code, 0) << shown_to_caller.out << shown_to_caller.err;
  EXPECT_NE(shown_to_caller.out.find("0.001000 per request"), std::string::npos)
      << shown_to_caller.out;

  // Six answers billed: three completions of 4 tokens (one asking for gzip), a stream of 4, a
  // header of 6, and a GET with no usage; one answer whose usage is broken, counted and not billed.
  for (int i = 0; i < 2; ++i) ASSERT_EQ(chat(caller, json::object()).status, 200);
  // The third asks for gzip, as the official OpenAI client does: billed its tokens all the same.
  const json asked = {{"model", "chat-1"},
                      {"messages", {{{"role", "user"}, {"content", "a b c"}}}}};
  const RawAnswer gzipped = raw_request(daemon_.url(), "POST", "/v1/chat/completions", caller,
                                        asked.dump(), "", {{"Accept-Encoding", "gzip"}});
  ASSERT_EQ(gzipped.status, 200) << gzipped.body;
  const ClientResponse streamed = chat(caller, {{"stream", true}});
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_NE(streamed.body.find("data: [DONE]"), std::string::npos) << streamed.body;
  ASSERT_EQ(chat(caller, {{"tokens_header", 6}}).status, 200);
  ASSERT_EQ(get("/s/" + id + "/hello", caller).status, 200);
  ASSERT_EQ(chat(caller, {{"broken", true}}).status, 200);
  // The service's tenant's own calls are not billed to anyone.
  ASSERT_EQ(chat(member_key_, json::object()).status, 200);

  // 6 x 0.001 + 22 tokens x 0.5 / 1000 = 0.006 + 0.011.
  const std::string margin_path = "/v1/services/chat/margin";
  json margin;
  ASSERT_TRUE(eventually([&] {
    margin = call_with(member_key_, "GET", margin_path, "", 200);
    return margin["requests"] == 6 && margin["malformed"] == 1 && margin["gpu_cost"] != "0.000000";
  })) << margin.dump(2);
  EXPECT_EQ(margin["tokens"], 22);
  EXPECT_EQ(margin["malformed"], 1);
  EXPECT_EQ(margin["revenue"], "0.017000");
  EXPECT_EQ(margin["paid"], "0.017000");
  ASSERT_EQ(margin["callers"].size(), 1U) << margin.dump(2);
  EXPECT_EQ(margin["callers"][0]["tenant"], "buyer");
  const int64_t cost = Money::parse(margin["gpu_cost"].get<std::string>())->micros();
  EXPECT_GT(cost, 0) << margin.dump(2);
  EXPECT_EQ(margin["margin"], Money::from_micros(17'000 - cost).to_string());
  const RunResult shown = cli({"services", "margin", "chat"}, member_key_);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("0.017000"), std::string::npos) << shown.out;
  const RunResult bad_window =
      cli({"services", "margin", "chat", "--from", "last week"}, member_key_);
  EXPECT_NE(bad_window.exit_code, 0);
  EXPECT_NE(bad_window.err.find("invalid_argument"), std::string::npos) << bad_window.err;
  const std::string balance = "/v1/tenants/" + buyer.id + "/balance";
  EXPECT_EQ(as_operator("GET", balance, nullptr, 200)["cash"], "0.983000");

  // The caller's invoice: one service line, priced exactly, paid from the balance.
  const std::string month = format_month(SystemClock().now_ms());
  json invoice =
      as_operator("POST", "/v1/invoices", {{"tenant_id", buyer.id}, {"month", month}}, 201);
  ASSERT_EQ(invoice["lines"].size(), 1U) << invoice.dump(2);
  const json& line = invoice["lines"][0];
  EXPECT_EQ(line["kind"], "service");
  EXPECT_EQ(line["service_id"], id);
  EXPECT_EQ(line["requests"], 6);
  EXPECT_EQ(line["tokens"], 22);
  EXPECT_EQ(line["amount"], "0.017000");
  EXPECT_EQ(invoice["total"], "0.017000");
  EXPECT_EQ(invoice["paid_from_balance"], "0.017000");
  EXPECT_EQ(invoice["amount_due"], "0.000000");
  // Its usage report matches: the calls' spend under its tenant.
  const json usage = call_with(buyer.key, "GET", "/v1/usage", "", 200);
  EXPECT_EQ(usage["total"]["spend"], "0.017000") << usage.dump(2);
  // By project, the calls are a row of their own, named: no project made them.
  const json by_project = call_with(buyer.key, "GET", "/v1/usage?group_by=project", "", 200);
  ASSERT_EQ(by_project["items"].size(), 1U) << by_project.dump(2);
  EXPECT_EQ(by_project["items"][0]["key"], "services");
  EXPECT_EQ(by_project["items"][0]["name"], "calls to shared services");
  const ClientResponse html = daemon_.request(
      "GET", "/v1/invoices/" + invoice["id"].get<std::string>() + "?format=html", "", buyer.key);
  EXPECT_NE(html.body.find("6 requests at 0.001000, 22 tokens at 0.500000 per 1,000"),
            std::string::npos)
      << html.body;

  // A rise reaches the caller only after its notice: it is told at once, by an event, and its
  // next call still costs what it did.
  const json raised =
      call_with(member_key_, "PATCH", "/v1/services/chat", R"({"price_per_request": "1"})", 200);
  EXPECT_EQ(raised["price_per_request"], "0.001000") << raised.dump(2);
  ASSERT_TRUE(raised["price_change"].is_object()) << raised.dump(2);
  EXPECT_EQ(raised["price_change"]["price_per_request"], "1.000000");
  const json events = call_with(buyer.key, "GET", "/v1/events", "", 200);
  const auto told = std::ranges::find_if(
      events["items"], [](const json& e) { return e.value("kind", "") == "service.price_rising"; });
  ASSERT_NE(told, events["items"].end()) << events.dump(2);
  EXPECT_EQ((*told)["data"]["new_price_per_request"], "1.000000") << told->dump();
  ASSERT_EQ(chat(caller, json::object()).status, 200);
  EXPECT_TRUE(eventually([&] {
    return as_operator("GET", balance, nullptr, 200)["cash"] == "0.980000";  // 0.001 + 2 tokens.
  })) << as_operator("GET", balance, nullptr, 200).dump();
  ASSERT_TRUE(eventually([&] {
    return call_with(buyer.key, "GET", "/v1/services/" + id, "", 200)["price_per_request"] ==
           "1.000000";
  }));

  // Dearer than the balance, forty calls at once: one is answered, the others are refused, so at
  // most one call's worth is owed; the next is refused with 402 until the balance is topped up.
  std::vector<std::thread> callers;
  callers.reserve(40);
  std::atomic<int> answered = 0;
  std::atomic<int> unpaid = 0;
  for (int i = 0; i < 40; ++i) {
    callers.emplace_back([&] {
      const int status =
          raw_request(daemon_.url(), "POST", "/v1/chat/completions", caller, asked.dump()).status;
      if (status == 200) ++answered;
      if (status == 402) ++unpaid;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(answered.load(), 1);
  EXPECT_EQ(unpaid.load(), 39);
  ClientResponse refused;
  ASSERT_TRUE(eventually([&] {
    refused = chat(caller, json::object());
    return refused.status == 402;
  })) << refused.status
      << " " << refused.body;
  EXPECT_EQ(error_code_of(refused.body), "insufficient_funds");
  // The answered call is recorded in the controller's next round of use, at once or a little later.
  EXPECT_TRUE(eventually([&] {
    return as_operator("GET", balance, nullptr, 200)["cash"] == "0.000000";
  })) << as_operator("GET", balance, nullptr, 200).dump();
  // Drafted again: the same draft, its lines read afresh.
  invoice = as_operator("POST", "/v1/invoices", {{"tenant_id", buyer.id}, {"month", month}}, 200);
  EXPECT_EQ(invoice["paid_from_balance"], "1.000000") << invoice.dump(2);
  EXPECT_GT(Money::parse(invoice["amount_due"].get<std::string>())->micros(), 0) << invoice.dump(2);
  as_operator("POST", "/v1/tenants/" + buyer.id + "/topups", {{"amount", "5"}}, 201);
  EXPECT_TRUE(eventually([&] { return chat(caller, json::object()).status == 200; }));
  // A promotional credit pays for GPU work and storage, never for calls: the balance says how much
  // of what is available the tenant's calls may spend, and the refusal says why.
  as_operator("POST", "/v1/tenants/" + buyer.id + "/topups", {{"amount", "100"}, {"credit", true}},
              201);
  const json funds = as_operator("GET", balance, nullptr, 200);
  EXPECT_EQ(funds["credits"], "100.000000") << funds.dump();
  const auto micros_of = [](const json& text) {
    return Money::parse(text.get<std::string>())->micros();
  };
  EXPECT_EQ(micros_of(funds["available"]) - micros_of(funds["available_for_services"]), 100'000'000)
      << funds.dump();
  EXPECT_NE(refused.body.find("promotional credit does not pay for calls"), std::string::npos)
      << refused.body;

  // Nobody else: the caller key reaches nothing but the service; the caller sees its own keys
  // and not the margin or the service; another tenant cannot see or revoke the caller's key.
  call_with(caller, "GET", "/v1/services", "", 401);
  // It sees what the service is and what its calls cost, and nothing of its replicas.
  const json seen = call_with(buyer.key, "GET", "/v1/services/" + id, "", 200);
  EXPECT_EQ(seen["price_per_request"], "1.000000");
  EXPECT_FALSE(seen.contains("replicas")) << seen.dump();
  // By name too, as it found it: the same view.
  EXPECT_EQ(call_with(buyer.key, "GET", "/v1/services/chat", "", 200), seen);
  call_with(buyer.key, "GET", "/v1/services/" + id + "/margin", "", 404);
  call_with(member_key_, "POST", keys, R"({"name": "own"})", 201);
  EXPECT_EQ(call_with(buyer.key, "GET", keys, "", 200)["items"].size(), 1U);
  EXPECT_EQ(call_with(member_key_, "GET", keys, "", 200)["items"].size(), 2U);
  const Tenant other = caller_tenant("other");
  call_with(other.key, "DELETE", keys + "/" + key["id"].get<std::string>(), "", 404);
  // Unshared again: the caller key stops at once.
  call_with(member_key_, "PATCH", "/v1/services/chat", R"({"shared": false})", 200);
  EXPECT_EQ(chat(caller, json::object()).status, 404);

  // Careless prices: refused, nothing changed.
  for (const char* bad : {R"({"price_per_request": "-1"})", R"({"price_per_1k_tokens": "x"})",
                          R"({"price_per_request": 1})"}) {
    const ClientResponse answer = daemon_.request("PATCH", "/v1/services/chat", bad, member_key_);
    EXPECT_EQ(answer.status, 400) << bad << " " << answer.body;
  }
  EXPECT_EQ(service("chat")["price_per_request"], "1.000000");
}

}  // namespace
}  // namespace allot::testing
