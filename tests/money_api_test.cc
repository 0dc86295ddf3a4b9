// Tenant money through the API of a real allotd: the operator records top-ups and credits and sets
// how a tenant pays; tenants read their own balance; retries are harmless; bad input moves no
// money; and what was acknowledged is there after a restart.
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class MoneyApiTest : public ApiTest {
 protected:
  std::string topups(const std::string& tenant) { return "/v1/tenants/" + tenant + "/topups"; }
  json balance(const std::string& tenant) {
    return call("GET", "/v1/tenants/" + tenant + "/balance", nullptr, op_key_, 200);
  }
};

TEST_F(MoneyApiTest, TopUpsAreRecordedOnceAndReadByTheTenantAndSurviveARestart) {
  const json tenant =
      call("PATCH", "/v1/tenants/" + a_.tenant_id, {{"billing", "prepaid"}}, op_key_, 200);
  EXPECT_EQ(tenant["billing"], "prepaid");
  daemon_.set_free_prices("default");
  // Nothing paid in yet: no work starts.
  const json refused =
      call("POST", "/v1/instances", {{"gpus", 1}, {"command", {"true"}}}, a_.member_key, 402);
  EXPECT_EQ(refused["error"]["code"], "insufficient_funds");

  const json first =
      call("POST", topups(a_.tenant_id), {{"amount", "100.50"}, {"id", "pay-1"}}, op_key_, 201);
  EXPECT_EQ(first["cash"], "100.500000");
  EXPECT_EQ(first["available"], "100.500000");
  // The same top-up again (a retry): nothing more moves.
  EXPECT_EQ(call("POST", topups(a_.tenant_id), {{"amount", "100.50"}, {"id", "pay-1"}}, op_key_,
                 200)["cash"],
            "100.500000");
  EXPECT_EQ(call("POST", topups(a_.tenant_id), {{"amount", "7"}, {"id", "pay-1"}}, op_key_,
                 409)["error"]["code"],
            "conflict");
  const json credit = call("POST", topups(a_.tenant_id),
                           {{"amount", "20"},
                            {"credit", true},
                            {"expires_at", "2099-01-01T00:00:00Z"},
                            {"id", "welcome"}},
                           op_key_, 201);
  EXPECT_EQ(credit["credits"], "20.000000");
  EXPECT_EQ(credit["available"], "120.500000");

  // The tenant reads its own balance and ledger, not another's; it cannot top itself up.
  EXPECT_EQ(call("GET", "/v1/tenants/me/balance", nullptr, a_.member_key, 200)["cash"],
            "100.500000");
  call("GET", "/v1/tenants/" + b_.tenant_id + "/balance", nullptr, a_.member_key, 404);
  const json statement =
      call("GET", "/v1/tenants/" + a_.tenant_id + "/ledger", nullptr, a_.member_key, 200);
  ASSERT_EQ(statement["items"].size(), 2u);
  EXPECT_EQ(statement["items"][0]["code"], "credit");
  EXPECT_EQ(statement["items"][1]["amount"], "100.500000");
  EXPECT_TRUE(statement["next_after"].is_null());
  // A page at a time, newest first: the second page starts after the first's last line.
  const std::string ledger = "/v1/tenants/" + a_.tenant_id + "/ledger";
  const json first_page = call("GET", ledger + "?limit=1", nullptr, a_.member_key, 200);
  ASSERT_EQ(first_page["items"].size(), 1u);
  EXPECT_EQ(first_page["items"][0]["code"], "credit");
  ASSERT_EQ(first_page["next_after"], first_page["items"][0]["id"]);
  const json second_page =
      call("GET", ledger + "?limit=1&after=" + first_page["next_after"].get<std::string>(), nullptr,
           a_.member_key, 200);
  ASSERT_EQ(second_page["items"].size(), 1u);
  EXPECT_EQ(second_page["items"][0]["amount"], "100.500000");
  EXPECT_TRUE(second_page["next_after"].is_null());
  EXPECT_EQ(call("GET", ledger + "?after=nope", nullptr, a_.member_key, 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(
      call("POST", topups(a_.tenant_id), {{"amount", "1000"}}, a_.admin_key, 403)["error"]["code"],
      "forbidden");
  EXPECT_EQ(
      call("POST", topups(b_.tenant_id), {{"amount", "1000"}}, a_.admin_key, 404)["error"]["code"],
      "not_found");

  // Acknowledged means durable: the ledger is replayed from its journal at start.
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  const json after = balance(a_.tenant_id);
  EXPECT_EQ(after["cash"], "100.500000");
  EXPECT_EQ(after["credits"], "20.000000");
  EXPECT_EQ(after["billing"], "prepaid");
  EXPECT_EQ(call("POST", topups(a_.tenant_id), {{"amount", "100.50"}, {"id", "pay-1"}}, op_key_,
                 200)["cash"],
            "100.500000");
}

TEST_F(MoneyApiTest, BadTopUpsAndBillingChangesAreRefusedAndMoveNoMoney) {
  call("POST", topups(a_.tenant_id), {{"amount", "10"}, {"id", "seed"}}, op_key_, 201);
  struct Case {
    std::string method, target;
    json body;
    int status;
    std::string code;
  };
  const std::string a = a_.tenant_id;
  const std::vector<Case> cases = {
      {"POST", topups(a), {{"amount", "0"}}, 400, "invalid_argument"},
      {"POST", topups(a), {{"amount", "-5"}}, 400, "invalid_argument"},
      {"POST", topups(a), {{"amount", "ten"}}, 400, "invalid_argument"},
      {"POST", topups(a), {{"amount", "99999999999999999999"}}, 400, "overflow"},
      {"POST", topups(a), {{"amount", "1000000000.000001"}}, 400, "invalid_argument"},
      {"POST", topups(a), {{"amount", 5}}, 400, "invalid_type"},
      {"POST", topups(a), json::object(), 400, "missing_field"},
      {"POST",
       topups(a),
       {{"amount", "5"}, {"expires_at", "2099-01-01T00:00:00Z"}},
       400,
       "invalid_argument"},
      {"POST",
       topups(a),
       {{"amount", "5"}, {"credit", true}, {"expires_at", "2000-01-01T00:00:00Z"}},
       400,
       "invalid_argument"},
      {"POST", topups(a), {{"amount", "5"}, {"id", "has spaces"}}, 400, "invalid_argument"},
      // An empty id is no id at all: refused, not a fresh top-up each time it is retried.
      {"POST", topups(a), {{"amount", "5"}, {"id", ""}}, 400, "invalid_argument"},
      {"POST", topups(a), {{"amount", "5"}, {"id", std::string(65, 'k')}}, 400, "invalid_argument"},
      {"POST", topups("ten_ffffffffffffffff"), {{"amount", "5"}}, 404, "not_found"},
      {"POST", topups("acme"), {{"amount", "5"}}, 400, "invalid_id"},
      {"PATCH", "/v1/tenants/" + a, {{"billing", "barter"}}, 400, "invalid_argument"},
      {"PATCH", "/v1/tenants/" + a, {{"credit_limit", "-1"}}, 400, "invalid_argument"},
      {"PATCH",
       "/v1/tenants/" + a,
       {{"billing", "prepaid"}, {"credit_limit", "5"}},
       400,
       "invalid_argument"},
      {"POST",
       "/v1/instances",
       {{"gpus", 1}, {"command", {"true"}}, {"max_price", "-1.50"}},
       400,
       "invalid_argument"},
  };
  for (const Case& c : cases) {
    const std::string before = snapshot();
    const json cash_before = balance(a)["cash"];
    const std::string key = c.target == "/v1/instances" ? a_.member_key : op_key_;
    const json answer = call(c.method, c.target, c.body, key, c.status);
    EXPECT_EQ(answer["error"]["code"], c.code) << c.target << " " << c.body.dump();
    EXPECT_EQ(snapshot(), before) << c.body.dump() << " changed something";
    EXPECT_EQ(balance(a)["cash"], cash_before) << c.body.dump() << " moved money";
  }
}

TEST_F(MoneyApiTest, ACreditLimitIsSetAndTheBalanceMovesWithTheBillingMode) {
  const json tenant = call("PATCH", "/v1/tenants/" + a_.tenant_id,
                           {{"billing", "postpaid"}, {"credit_limit", "250"}}, op_key_, 200);
  EXPECT_EQ(tenant["credit_limit"], "250.000000");
  EXPECT_TRUE(balance(a_.tenant_id)["available"] == "250.000000");
  call("POST", topups(a_.tenant_id), {{"amount", "40"}}, op_key_, 201);
  // Its balance moves with it to the prepaid account.
  call("PATCH", "/v1/tenants/" + a_.tenant_id, {{"billing", "prepaid"}}, op_key_, 200);
  const json after = balance(a_.tenant_id);
  EXPECT_EQ(after["cash"], "40.000000");
  EXPECT_EQ(after["credit_limit"], "0.000000");
}

}  // namespace
}  // namespace allot::testing
