// Quotas, reservations and tenant weights through the API: operator admins set them, tenants see
// their own, bad input is refused with its code and changes nothing.
#include <regex>

#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

// A_TENANT's reservation of `gpus` H100s from `starts_at` to `ends_at`, as a request body.
std::string reservation(int gpus, const std::string& starts_at, const std::string& ends_at) {
  return json{{"tenant_id", "A_TENANT"},
              {"gpu_model", "H100-80GB"},
              {"gpus", gpus},
              {"starts_at", starts_at},
              {"ends_at", ends_at}}
      .dump();
}

class RulesApiTest : public ApiTest {
 protected:
  // Sends `body` (with A_TENANT, A_PROJECT, B_PROJECT filled in) and expects a refusal.
  void expect_refused(const std::string& method, const std::string& target, std::string body,
                      const std::string& key, int status, const std::string& code) {
    body = std::regex_replace(body, std::regex("A_TENANT"), a_.tenant_id);
    body = std::regex_replace(body, std::regex("A_PROJECT"), a_.project_id);
    body = std::regex_replace(body, std::regex("B_PROJECT"), b_.project_id);
    const std::string before = snapshot();
    const ClientResponse response = daemon_.request(method, target, body, key);
    EXPECT_EQ(response.status, status)
        << method << " " << target << " " << body << ": " << response.body;
    const json answer = json::parse(response.body, nullptr, false);
    EXPECT_EQ(answer["error"].value("code", ""), code) << body;
    EXPECT_EQ(snapshot(), before) << body << " changed something";
  }
};

TEST_F(RulesApiTest, BadQuotasReservationsAndWeightsAreRefusedAndChangeNothing) {
  const std::string& op = op_key_;
  struct Case {
    const char* method;
    const char* target;
    std::string body;
    int status;
    const char* code;
  };
  const Case cases[] = {
      {"PUT", "/v1/quotas", R"({"gpus": 8})", 400, "missing_field"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT"})", 400, "invalid_argument"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": 1, "gpu_milli": 1000})", 400,
       "invalid_argument"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": -1})", 400, "invalid_argument"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": "8"})", 400, "invalid_type"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": 8, "gpu_model": "Z80"})", 400,
       "invalid_argument"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "acme", "gpus": 8})", 400, "invalid_id"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "ten_ffffffffffffffff", "gpus": 8})", 404,
       "not_found"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "project_id": "B_PROJECT", "gpus": 8})",
       404, "not_found"},
      {"PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": 8, "hard": true})", 400,
       "unknown_field"},
      {"DELETE", "/v1/quotas/quo_ffffffffffffffff", "", 404, "not_found"},
      {"DELETE", "/v1/quotas/q1", "", 400, "invalid_id"},
      {"GET", "/v1/quotas?colour=red", "", 400, "unknown_field"},
      {"POST", "/v1/reservations", reservation(1, "tomorrow", "2030-01-01T00:00:00Z"), 400,
       "invalid_argument"},
      {"POST", "/v1/reservations", reservation(1, "2030-01-02T00:00:00Z", "2030-01-01T00:00:00Z"),
       400, "invalid_argument"},
      {"POST", "/v1/reservations", reservation(0, "2030-01-01T00:00:00Z", "2030-01-02T00:00:00Z"),
       400, "invalid_argument"},
      {"POST", "/v1/reservations", reservation(1, "2030-01-01T00:00:00Z", "2030-01-02T00:00:00Z"),
       409, "conflict"},  // The cluster has no H100s at all.
      {"POST", "/v1/reservations", R"({"tenant_id": "A_TENANT"})", 400, "missing_field"},
      {"DELETE", "/v1/reservations/rsv_ffffffffffffffff", "", 404, "not_found"},
      {"PATCH", "/v1/tenants/A_TENANT", R"({"weight": 0})", 400, "invalid_argument"},
      {"PATCH", "/v1/tenants/A_TENANT", R"({"weight": 1.5})", 400, "invalid_type"},
      {"PATCH", "/v1/tenants/ten_ffffffffffffffff", R"({"weight": 2})", 404, "not_found"},
  };
  for (const Case& c : cases) {
    std::string target = std::regex_replace(c.target, std::regex("A_TENANT"), a_.tenant_id);
    expect_refused(c.method, target, c.body, op, c.status, c.code);
  }
  // Only operator admins set rules.
  expect_refused("PUT", "/v1/quotas", R"({"tenant_id": "A_TENANT", "gpus": 100})", a_.admin_key,
                 403, "forbidden");
  expect_refused("PATCH", "/v1/tenants/" + a_.tenant_id, R"({"weight": 9})", a_.admin_key, 403,
                 "forbidden");
  expect_refused("POST", "/v1/reservations",
                 reservation(1, "2030-01-01T00:00:00Z", "2030-01-02T00:00:00Z"), a_.admin_key, 403,
                 "forbidden");
}

TEST_F(RulesApiTest, QuotasAreSetReplacedListedAndDeleted) {
  json quota =
      call("PUT", "/v1/quotas", {{"tenant_id", a_.tenant_id}, {"gpu_model", "H100"}, {"gpus", 8}},
           op_key_, 200);
  EXPECT_EQ(quota["gpu_milli"], 8000);
  EXPECT_EQ(quota["used_milli"], 0);
  json again =
      call("PUT", "/v1/quotas",
           {{"tenant_id", a_.tenant_id}, {"gpu_model", "H100"}, {"gpu_milli", 2500}}, op_key_, 200);
  EXPECT_EQ(again["id"], quota["id"]);
  EXPECT_EQ(again["gpu_milli"], 2500);
  call("PUT", "/v1/quotas", {{"tenant_id", b_.tenant_id}, {"gpus", 1}}, op_key_, 200);
  // A tenant's users see their own quotas only; the operator sees all.
  EXPECT_EQ(call("GET", "/v1/quotas", nullptr, a_.member_key, 200)["items"].size(), 1u);
  EXPECT_EQ(call("GET", "/v1/quotas", nullptr, op_key_, 200)["items"].size(), 2u);
  call("GET", "/v1/quotas?tenant_id=" + b_.tenant_id, nullptr, a_.member_key, 404);
  // A launch over the limit is refused at once, naming the quota.
  daemon_.set_free_prices("default");
  const json refused =
      call("POST", "/v1/instances", {{"gpus", 4}, {"gpu_models", {"H100"}}, {"command", {"true"}}},
           a_.member_key, 422);
  EXPECT_NE(refused["error"].value("message", "").find(quota["id"].get<std::string>()),
            std::string::npos);
  const std::string id = quota["id"];
  EXPECT_FALSE(call("DELETE", "/v1/quotas/" + id, nullptr, op_key_, 200)["deleted_at"].is_null());
  EXPECT_EQ(call("GET", "/v1/quotas", nullptr, a_.member_key, 200)["items"].size(), 0u);
  EXPECT_EQ(
      call("GET", "/v1/quotas?include_ended=true", nullptr, a_.member_key, 200)["items"].size(),
      1u);
}

TEST_F(RulesApiTest, TenantWeightsAreSetByTheOperatorAndKeptAcrossARestart) {
  EXPECT_EQ(call("GET", "/v1/tenants/" + a_.tenant_id, nullptr, a_.admin_key, 200)["weight"], 1);
  EXPECT_EQ(call("PATCH", "/v1/tenants/" + a_.tenant_id, {{"weight", 3}}, op_key_, 200)["weight"],
            3);
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(call("GET", "/v1/tenants/" + a_.tenant_id, nullptr, a_.admin_key, 200)["weight"], 3);
}

TEST_F(RulesApiTest, PricesAreSetFromNowOnAndReadByEveryone) {
  const json first =
      call("PUT", "/v1/prices",
           {{"gpu_model", "H100-80GB"}, {"region", "eu"}, {"gpu_hour", "2.50"}}, op_key_, 200);
  EXPECT_EQ(first["gpu_hour"], "2.500000");
  EXPECT_EQ(first["price_class"], "on-demand");
  call("PUT", "/v1/prices",
       {{"gpu_model", "H100-80GB"},
        {"region", "eu"},
        {"gpu_hour", "3"},
        {"effective_at", "2099-01-01T00:00:00Z"}},
       op_key_, 200);
  const json now = call("GET", "/v1/prices", nullptr, a_.member_key, 200);
  ASSERT_EQ(now["items"].size(), 2u);
  EXPECT_EQ(now["items"][0]["in_force"], true);
  EXPECT_EQ(now["items"][1]["in_force"], false);
  const json later = call("GET", "/v1/prices?at=2099-06-01T00:00:00Z", nullptr, a_.member_key, 200);
  ASSERT_EQ(later["items"].size(), 1u);
  EXPECT_EQ(later["items"][0]["gpu_hour"], "3.000000");
  // Bad prices are refused and change nothing.
  const std::string before = daemon_.request("GET", "/v1/prices", "", op_key_).body;
  call("PUT", "/v1/prices", {{"gpu_model", "H100"}, {"region", "eu"}, {"gpu_hour", "1"}}, op_key_,
       400);
  call("PUT", "/v1/prices", {{"gpu_model", "H100-80GB"}, {"region", ""}, {"gpu_hour", "1"}},
       op_key_, 400);
  call("PUT", "/v1/prices", {{"gpu_model", "H100-80GB"}, {"region", "eu"}, {"gpu_hour", "-1"}},
       op_key_, 400);
  call("PUT", "/v1/prices",
       {{"gpu_model", "H100-80GB"}, {"region", "eu"}, {"gpu_hour", "1.2345678"}}, op_key_, 400);
  call("PUT", "/v1/prices",
       {{"gpu_model", "H100-80GB"},
        {"region", "eu"},
        {"gpu_hour", "1"},
        {"effective_at", "2001-01-01T00:00:00Z"}},
       op_key_, 400);
  call("PUT", "/v1/prices", {{"gpu_model", "H100-80GB"}, {"region", "eu"}}, op_key_, 400);
  call("PUT", "/v1/prices", {{"gpu_model", "H100-80GB"}, {"region", "eu"}, {"gpu_hour", "1"}},
       a_.admin_key, 403);
  call("GET", "/v1/prices?at=soon", nullptr, a_.member_key, 400);
  EXPECT_EQ(daemon_.request("GET", "/v1/prices", "", op_key_).body, before);
  // Kept across a restart.
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(daemon_.request("GET", "/v1/prices", "", op_key_).body, before);
}

}  // namespace
}  // namespace allot::testing
