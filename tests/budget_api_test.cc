// Budgets end to end: a real allotd with a simulated node, work that spends money, and a real
// HTTP receiver for the signed webhooks, which fail first and are retried, also across a restart.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdlib>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cluster.h"
#include "support/webhook_receiver.h"

namespace allot::testing {
namespace {

using nlohmann::json;

// The receiver's own check of a signature, written from docs/api.md and not from allotd's code.
std::string expected_signature(const std::string& secret, const std::string& timestamp,
                               const std::string& body) {
  const std::string message = timestamp + "." + body;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &length);
  std::string hex = "sha256=";
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", mac[i]);
  return hex;
}

class BudgetApiTest : public ClusterTest {
 protected:
  void SetUp() override {
    agent_count_ = 1;
    free_prices_ = false;  // It sets the price its budget is spent at.
    // The receiver listens on loopback, which tenants' webhooks reach only when allowed.
    extra_daemon_args_ = {"--webhook-allow", "127.0.0.0/8,::1"};
    // Quick retries, and enough of them to outlast the restart below.
    ::setenv("ALLOT_WEBHOOK_RETRY_BASE_MS", "300", 1);
    ::setenv("ALLOT_WEBHOOK_RETRY_MAX_MS", "1000", 1);
    ::setenv("ALLOT_WEBHOOK_MAX_ATTEMPTS", "100", 1);
    ClusterTest::SetUp();
    ::unsetenv("ALLOT_WEBHOOK_RETRY_BASE_MS");
    ::unsetenv("ALLOT_WEBHOOK_RETRY_MAX_MS");
    ::unsetenv("ALLOT_WEBHOOK_MAX_ATTEMPTS");
    tenant_id_ = call("GET", "/v1/projects/" + project_id_, nullptr, 200).value("tenant_id", "");
  }

  // The receiver's requests for one delivery.
  std::vector<WebhookReceiver::Request> deliveries_of(const std::string& delivery_id) {
    std::vector<WebhookReceiver::Request> out;
    for (const auto& r : receiver_.requests()) {
      if (r.headers.contains("x-allot-delivery") &&
          r.headers.at("x-allot-delivery") == delivery_id) {
        out.push_back(r);
      }
    }
    return out;
  }

  json events() { return call("GET", "/v1/events", nullptr, 200)["items"]; }

  // The event of a threshold, or null.
  json threshold_event(int64_t pct) {
    for (const json& e : events()) {
      if (e["kind"] == "budget.threshold" && e["data"]["threshold_pct"] == pct) return e;
    }
    return nullptr;
  }

  void expect_signed(const WebhookReceiver::Request& r, const std::string& secret) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hooks/allot?team=ml");
    EXPECT_EQ(r.headers.at("x-allot-event"), "budget.threshold");
    ASSERT_TRUE(r.headers.contains("x-allot-timestamp"));
    const int64_t ts = std::stoll(r.headers.at("x-allot-timestamp"));
    EXPECT_LT(std::abs(ts - std::time(nullptr)), 120);
    EXPECT_EQ(r.headers.at("x-allot-signature"),
              expected_signature(secret, r.headers.at("x-allot-timestamp"), r.body));
    EXPECT_NE(r.headers.at("x-allot-signature"),
              expected_signature(secret + "x", r.headers.at("x-allot-timestamp"), r.body));
  }

  WebhookReceiver receiver_;
  std::string tenant_id_;
};

TEST_F(BudgetApiTest, BadBudgetsAreRefusedAndChangeNothing) {
  const json base = {{"tenant_id", tenant_id_}, {"amount", "10"}};
  auto refused = [&](const json& change, int status, const std::string& code) {
    json body = base;
    body.update(change);
    const json answer = as_operator("PUT", "/v1/budgets", body, status);
    EXPECT_EQ(answer["error"]["code"], code) << body.dump();
  };
  refused({{"amount", "0"}}, 400, "invalid_argument");
  refused({{"amount", "-5"}}, 400, "invalid_argument");
  refused({{"amount", "99999999999999999999"}}, 400, "overflow");
  refused({{"amount", "ten"}}, 400, "invalid_argument");
  refused({{"thresholds_pct", {80, 50}}}, 400, "invalid_argument");
  refused({{"thresholds_pct", {0}}}, 400, "invalid_argument");
  refused({{"thresholds_pct", {50, 1001}}}, 400, "invalid_argument");
  refused({{"thresholds_pct", "50"}}, 400, "invalid_type");
  refused({{"enforcement", "later"}}, 400, "invalid_argument");
  refused({{"webhook_url", "ftp://example.com/hook"}}, 400, "invalid_argument");
  refused({{"webhook_url", "http://example.com/"}, {"webhook_secret", "short"}}, 400,
          "invalid_argument");
  // A tenant's webhook may not reach inside the operator's network: cloud metadata, private
  // ranges, and loopback beyond what the operator allowed (127.0.0.0/8 and ::1 here).
  for (const char* inside : {"http://169.254.169.254/latest/meta-data", "http://10.0.0.5/hook",
                             "http://192.168.1.1/", "http://[fe80::1]/", "http://0.0.0.0:80/"}) {
    refused({{"webhook_url", inside}}, 400, "invalid_argument");
  }
  refused({{"tenant_id", "ten_00000000000000ff"}}, 404, "not_found");
  refused({{"project_id", "prj_00000000000000ff"}}, 404, "not_found");
  refused({{"color", "red"}}, 400, "unknown_field");
  // A member may read the tenant's budgets but not set them.
  EXPECT_EQ(call("PUT", "/v1/budgets", {{"amount", "10"}}, 403)["error"]["code"], "forbidden");
  EXPECT_TRUE(call("GET", "/v1/budgets", nullptr, 200)["items"].empty());
  EXPECT_TRUE(as_operator("GET", "/v1/budgets", nullptr, 200)["items"].empty());
}

TEST_F(BudgetApiTest, SignedWebhooksAreRetriedUntilTakenAlsoAcrossARestart) {
  // One GPU costs one unit a second.
  as_operator("PUT", "/v1/prices",
              {{"gpu_model", "H100-80GB"}, {"region", "default"}, {"gpu_hour", "3600"}}, 200);
  receiver_.script({500});  // The first delivery fails once; the rest are taken.
  const json budget = as_operator("PUT", "/v1/budgets",
                                  {{"tenant_id", tenant_id_},
                                   {"amount", "6"},
                                   {"thresholds_pct", {10, 100}},
                                   {"enforcement", "block_new"},
                                   {"webhook_url", receiver_.url("/hooks/allot?team=ml")}},
                                  200);
  const std::string secret = budget.value("webhook_secret", "");
  ASSERT_TRUE(secret.starts_with("whsec_")) << budget.dump();
  EXPECT_EQ(budget["amount"], "6.000000");
  // The secret is shown once: listings never carry it.
  const json listed = call("GET", "/v1/budgets", nullptr, 200)["items"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_FALSE(listed[0].contains("webhook_secret"));
  EXPECT_EQ(listed[0]["id"], budget["id"]);

  launch({{"gpus", 1}, {"command", {"sleep", "600"}}});

  // 10 % (0.6 units): refused once with 500, then taken with the same delivery id.
  json first;
  ASSERT_TRUE(eventually([&] {
    first = threshold_event(10);
    return !first.is_null() && first["delivery"]["state"] == "delivered";
  })) << events().dump();
  EXPECT_EQ(first["delivery"]["attempts"], 2);
  EXPECT_EQ(first["delivery"]["last_status"], "200");
  EXPECT_EQ(first["tenant_id"], tenant_id_);
  const std::string delivery_id = fmt::format("dlv_{:016x}", first["seq"].get<int64_t>());
  const auto tries = deliveries_of(delivery_id);
  ASSERT_EQ(tries.size(), 2u);
  EXPECT_EQ(tries[0].answered, 500);
  EXPECT_EQ(tries[1].answered, 200);
  for (const auto& r : tries) expect_signed(r, secret);
  const json body = json::parse(tries[1].body);
  EXPECT_EQ(body["id"], first["id"]);
  EXPECT_EQ(body["kind"], "budget.threshold");
  EXPECT_EQ(body["data"]["budget_id"], budget["id"]);
  EXPECT_EQ(body["data"]["threshold_pct"], 10);
  EXPECT_EQ(body["data"]["amount"], "6.000000");

  // From now on the receiver fails: the 100 % alert stays pending and is retried.
  receiver_.set_default(503);
  json full;
  ASSERT_TRUE(eventually([&] {
    full = threshold_event(100);
    return !full.is_null() && full["delivery"]["attempts"].get<int>() >= 2;
  })) << events().dump();
  EXPECT_EQ(full["delivery"]["state"], "pending");
  EXPECT_EQ(full["delivery"]["last_status"], "503");
  // The budget is spent: new work is refused with a stable code.
  const json refused =
      call("POST", "/v1/instances",
           {{"project_id", project_id_}, {"gpus", 1}, {"command", {"sleep", "1"}}}, 402);
  EXPECT_EQ(refused["error"]["code"], "budget_exceeded");
  EXPECT_EQ(call("GET", "/v1/budgets", nullptr, 200)["items"][0]["reached_pct"], json({10, 100}));
  // The enforcement that refused it is an event of its own, bound for the webhook too.
  json enforced;
  for (const json& e : events()) {
    if (e["kind"] == "budget.enforced") enforced = e;
  }
  ASSERT_FALSE(enforced.is_null()) << events().dump();
  EXPECT_EQ(enforced["data"]["enforcement"], "block_new");
  EXPECT_EQ(enforced["data"]["budget_id"], budget["id"]);
  EXPECT_TRUE(enforced.contains("delivery")) << enforced.dump();

  // Restart allotd; the receiver recovers meanwhile. The pending delivery resumes and arrives.
  ASSERT_EQ(daemon_.stop(), 0);
  receiver_.set_default(200);
  const std::string full_id = fmt::format("dlv_{:016x}", full["seq"].get<int64_t>());
  const size_t before = deliveries_of(full_id).size();
  ASSERT_TRUE(daemon_.start({"ALLOT_WEBHOOK_RETRY_BASE_MS=300", "ALLOT_WEBHOOK_MAX_ATTEMPTS=100"}));
  ASSERT_TRUE(eventually([&] {
    const json e = threshold_event(100);
    return !e.is_null() && e["delivery"]["state"] == "delivered";
  })) << events().dump();
  const auto after = deliveries_of(full_id);
  ASSERT_GT(after.size(), before);
  EXPECT_EQ(after.back().answered, 200);
  expect_signed(after.back(), secret);
  // Each alert was recorded once, whatever the retries and the restart.
  int thresholds = 0;
  for (const json& e : events()) thresholds += e["kind"] == "budget.threshold" ? 1 : 0;
  EXPECT_EQ(thresholds, 2);
}

TEST_F(BudgetApiTest, ATenantSeesOnlyItsOwnEvents) {
  // The operator's tenant is another tenant: the member may not ask for its events.
  const std::string op_tenant =
      as_operator("GET", "/v1/whoami", nullptr, 200)["tenant"].value("id", "");
  ASSERT_FALSE(op_tenant.empty());
  EXPECT_EQ(call("GET", "/v1/events?tenant_id=" + op_tenant, nullptr, 404)["error"]["code"],
            "not_found");
  EXPECT_EQ(call("GET", "/v1/events?after=x", nullptr, 400)["error"]["code"], "invalid_argument");
  EXPECT_TRUE(call("GET", "/v1/events", nullptr, 200)["items"].is_array());
}

}  // namespace
}  // namespace allot::testing
