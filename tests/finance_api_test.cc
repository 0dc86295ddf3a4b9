// The operator's books through the API of a real allotd: assets with schedules worked out by hand,
// sites, fixed costs and rental prices, the month's report and its CSV, bad input refused with its
// code and changing nothing, tenants kept out, and the books kept across a restart.
#include <regex>

#include "api/fields.h"
#include "common/clock.h"
#include "common/int128.h"
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class FinanceApiTest : public ApiTest {
 protected:
  // A node joins as its agent would, with one GPU of each model given.
  std::string join_node(const std::string& name, const std::string& region, int gpus = 2) {
    const std::string token =
        call("POST", "/v1/join-tokens", {{"name", name}}, op_key_, 201).value("token", "");
    json inventory = {{"name", name}, {"region", region}, {"gpus", json::array()}};
    for (int i = 0; i < gpus; ++i) {
      inventory["gpus"].push_back({{"index", i},
                                   {"uuid", "GPU-" + name + "-" + std::to_string(i)},
                                   {"model", "H100-80GB"}});
    }
    const ClientResponse joined =
        daemon_.request("POST", "/v1/agent/join", inventory.dump(), token);
    EXPECT_EQ(joined.status, 201) << joined.body;
    return json::parse(joined.body, nullptr, false).value("node_id", "");
  }

  json asset_body(const std::string& node, const std::string& cost, int life) {
    return {{"name", "rack " + node},
            {"nodes", {node}},
            {"cost", cost},
            {"in_service", month_ + "-01T00:00:00Z"},
            {"life_months", life}};
  }

  // A site with its rates, a fixed cost (and one deleted), and a rental price, each read back.
  void keep_books() {
    const json site = call("PUT", "/v1/finance/sites/eu-west",
                           {{"pue", "1.3"}, {"colocation_per_kw_month", "150.00"}}, op_key_, 200);
    EXPECT_EQ(site["pue"], "1.300");
    EXPECT_EQ(site["colocation_per_kw_month"], "150.000000");
    EXPECT_EQ(call("POST", "/v1/finance/sites/eu-west/power-prices", {{"price_per_kwh", "0.21"}},
                   op_key_, 201)["power_prices"][0]["price_per_kwh"],
              "0.210000");
    EXPECT_EQ(call("POST", "/v1/finance/sites/eu-west/carbon", {{"g_per_kwh", 380}}, op_key_,
                   201)["carbon"][0]["g_per_kwh"],
              380);
    EXPECT_EQ(call("GET", "/v1/finance/sites", nullptr, op_key_, 200)["items"].size(), 1u);
    const json cost =
        call("POST", "/v1/finance/costs",
             {{"name", "staff"}, {"monthly", "9000.00"}, {"rule", "per_gpu"}}, op_key_, 201);
    EXPECT_TRUE(std::regex_match(cost.value("id", ""), std::regex("fxc_[0-9a-f]{16}")));
    EXPECT_EQ(cost["from_month"], month_);
    const std::string gone =
        call("POST", "/v1/finance/costs", {{"name", "old"}, {"monthly", "1"}}, op_key_, 201)
            .value("id", "");
    EXPECT_FALSE(
        call("DELETE", "/v1/finance/costs/" + gone, nullptr, op_key_, 200)["deleted_at"].is_null());
    EXPECT_EQ(call("GET", "/v1/finance/costs", nullptr, op_key_, 200)["items"].size(), 1u);
    EXPECT_EQ(
        call("PUT", "/v1/finance/rental-prices",
             {{"provider", "cloudco"}, {"gpu_model", "H100-80GB"}, {"price_per_gpu_hour", "2.49"}},
             op_key_, 200)["price_per_gpu_hour"],
        "2.490000");
    EXPECT_EQ(call("GET", "/v1/finance/rental-prices", nullptr, op_key_, 200)["items"].size(), 1u);
  }

  // Everything in the books and everything else the operator lists: unchanged means unchanged.
  std::string everything() {
    std::string out = snapshot();
    for (const char* path :
         {"/v1/finance/assets", "/v1/finance/sites", "/v1/finance/costs?include_deleted=true",
          "/v1/finance/rental-prices"}) {
      out += daemon_.request("GET", path, "", op_key_).body;
    }
    return out;
  }

  void expect_refused(const std::string& method, const std::string& target, const json& body,
                      const std::string& key, int status, const std::string& code) {
    const std::string before = everything();
    const ClientResponse response =
        daemon_.request(method, target, body.is_null() ? "" : body.dump(), key);
    EXPECT_EQ(response.status, status)
        << method << " " << target << " " << body.dump() << ": " << response.body;
    EXPECT_EQ(json::parse(response.body, nullptr, false)["error"].value("code", ""), code)
        << method << " " << target << " " << body.dump() << ": " << response.body;
    EXPECT_EQ(everything(), before)
        << method << " " << target << " " << body.dump() << " changed something";
  }

  struct Case {
    std::string method, target;
    json body;
    int status;
    std::string code;
  };

  const std::string month_ = format_month(SystemClock().now_ms());
};

TEST_F(FinanceApiTest, AnAssetsSchedulesAreWorkedOutMonthByMonth) {
  const std::string node = join_node("gpu-1", "eu-west");
  json body = asset_body("gpu-1", "120000.00", 12);
  body["in_service"] = "2026-01-15T00:00:00Z";
  const json asset = call("POST", "/v1/finance/assets", body, op_key_, 201);
  const std::string id = asset.value("id", "");
  EXPECT_TRUE(std::regex_match(id, std::regex("ast_[0-9a-f]{16}"))) << id;
  EXPECT_EQ(asset["node_ids"], json::array({node}));  // Named by its name, kept by its id.
  EXPECT_EQ(asset["cost"], "120000.000000");
  EXPECT_EQ(asset["method"], "straight_line");
  EXPECT_EQ(asset["financing"]["kind"], "cash");
  // 120,000 over 12 months, nothing left: 10,000 a month from January 2026.
  const json& months = asset["schedules"]["depreciation"];
  ASSERT_EQ(months.size(), 12u);
  EXPECT_EQ(months[0]["month"], "2026-01");
  for (const json& m : months) EXPECT_EQ(m["depreciation"], "10000.000000") << m.dump();
  EXPECT_EQ(months[0]["book_end"], "110000.000000");
  EXPECT_EQ(months[11]["book_end"], "0.000000");
  EXPECT_EQ(asset["schedules"]["financing"], json::array());

  // From July the life is 24 months: the 60,000 left over the 18 months that remain.
  const json changed = call("POST", "/v1/finance/assets/" + id + "/estimates",
                            {{"from_month", "2026-07"}, {"life_months", 24}}, op_key_, 200);
  const json& after = changed["schedules"]["depreciation"];
  ASSERT_EQ(after.size(), 24u);
  EXPECT_EQ(after[5]["depreciation"], "10000.000000");
  EXPECT_EQ(after[6]["depreciation"], "3333.333333");
  EXPECT_EQ(after[23]["book_end"], "0.000000");

  const ClientResponse csv =
      daemon_.request("GET", "/v1/finance/assets/" + id + "?format=csv", "", op_key_);
  EXPECT_EQ(csv.status, 200);
  EXPECT_TRUE(
      csv.body.starts_with("month,depreciation,book_end,retirement_loss,payment,interest,"
                           "principal,balance_end,lease\r\n"))
      << csv.body;
  EXPECT_NE(csv.body.find("\r\n2026-01,10000.000000,110000.000000,0.000000,,,,,\r\n"),
            std::string::npos)
      << csv.body;
}

TEST_F(FinanceApiTest, ALoanIsAmortisedAndARetiredAssetBooksItsLoss) {
  join_node("gpu-2", "eu-west");
  json body = asset_body("gpu-2", "24000", 24);
  body["in_service"] = "2026-01-15T00:00:00Z";
  body["financing"] = {
      {"kind", "loan"}, {"principal", "12000"}, {"annual_rate", "0"}, {"term_months", 12}};
  const json asset = call("POST", "/v1/finance/assets", body, op_key_, 201);
  const std::string id = asset.value("id", "");
  EXPECT_EQ(asset["financing"]["monthly_payment"], "1000.000000");
  EXPECT_EQ(asset["financing"]["start_month"], "2026-01");
  const json& payments = asset["schedules"]["financing"];
  ASSERT_EQ(payments.size(), 12u);
  EXPECT_EQ(payments[0]["payment"], "1000.000000");
  EXPECT_EQ(payments[0]["interest"], "0.000000");
  EXPECT_EQ(payments[0]["balance_end"], "11000.000000");
  EXPECT_EQ(payments[11]["balance_end"], "0.000000");

  // 1,000 a month for January and February; in March the 22,000 left less 5,000 received.
  const json retired = call("POST", "/v1/finance/assets/" + id + "/retire",
                            {{"at", "2026-03-10T00:00:00Z"}, {"proceeds", "5000"}}, op_key_, 200);
  EXPECT_EQ(retired["retired_at"], "2026-03-10T00:00:00.000Z");
  const json& months = retired["schedules"]["depreciation"];
  ASSERT_EQ(months.size(), 3u);
  EXPECT_EQ(months[2]["depreciation"], "0.000000");
  EXPECT_EQ(months[2]["retirement_loss"], "17000.000000");
  expect_refused("POST", "/v1/finance/assets/" + id + "/retire", json::object(), op_key_, 409,
                 "conflict");
}

TEST_F(FinanceApiTest, TheMonthsReportAddsTheBooksUp) {
  join_node("gpu-3", "eu-west");
  keep_books();
  json body = asset_body("gpu-3", "120000", 12);
  body["power_kw"] = "10.5";
  const std::string asset = call("POST", "/v1/finance/assets", body, op_key_, 201).value("id", "");

  const json report = call("GET", "/v1/finance/report?month=" + month_, nullptr, op_key_, 200);
  EXPECT_EQ(report["month"], month_);
  EXPECT_EQ(report["by"], "node");
  ASSERT_EQ(report["groups"].size(), 1u);
  const json& g = report["groups"][0];
  EXPECT_EQ(g["key"], "gpu-3");
  EXPECT_EQ(g["gpus"], 2);
  // The month still runs: the asset (in service since the 1st) bears the part of its month that
  // has passed, and the whole month is projected with every cost in full.
  EXPECT_EQ(report["month_to_date"], true);
  EXPECT_NE(report.value("note", "").find("month to date"), std::string::npos) << report.dump();
  const TimeMs start = parse_time(month_ + "-01T00:00:00Z").value_or(0);
  const TimeMs through = parse_time(report.value("through", "")).value_or(0);
  ASSERT_GT(through, start) << report.dump();
  const auto passed = [&](int64_t micros) {
    return money_text(static_cast<int64_t>(Int128{micros} * (through - start) /
                                           (next_month_start(start) - start)));
  };
  EXPECT_EQ(g["depreciation"], passed(10'000'000'000));
  EXPECT_EQ(g["colocation"], passed(1'575'000'000));  // 10.5 kW at 150 a kW-month.
  EXPECT_EQ(g["utilisation"], "0.000000");
  EXPECT_FALSE(g.contains("what_if"));
  EXPECT_EQ(report["totals"]["revenue"], "0.000000");
  EXPECT_EQ(report["totals"]["net_revenue"], "0.000000");
  EXPECT_EQ(report["totals"]["margin"], "-" + g["costs"].get<std::string>());
  const json& projected = report["totals"]["whole_month_projected"];
  EXPECT_EQ(projected["costs"], "20575.000000");  // 10,000 + 1,575 + the 9,000 staff cost.
  EXPECT_EQ(projected["margin"], "-20575.000000");
  const json total = call("GET", "/v1/finance/report?by=total&price_factor=1.1&utilisation=0.8",
                          nullptr, op_key_, 200);
  ASSERT_EQ(total["groups"].size(), 1u);
  EXPECT_EQ(total["groups"][0]["key"], "total");
  EXPECT_TRUE(total["groups"][0]["what_if"].contains("margin")) << total.dump();

  const ClientResponse csv = daemon_.request("GET", "/v1/finance/report?format=csv", "", op_key_);
  EXPECT_EQ(csv.status, 200);
  EXPECT_TRUE(csv.body.starts_with("key,nodes,gpus,revenue,depreciation,")) << csv.body;
  EXPECT_NE(csv.body.find("\r\ngpu-3,1,2,0.000000,"), std::string::npos) << csv.body;
  // Costs and no revenue: the row's margin is a loss (its amount grows with the month's time).
  EXPECT_NE(csv.body.find(",-"), std::string::npos) << csv.body;

  const json payback = call("GET", "/v1/finance/payback", nullptr, op_key_, 200);
  ASSERT_EQ(payback["items"].size(), 1u);
  EXPECT_EQ(payback["items"][0]["asset_id"], asset);
  EXPECT_TRUE(payback["items"][0]["payback_month"].is_null());  // It only loses money.
  const json rent = call("GET", "/v1/finance/buy-or-rent", nullptr, op_key_, 200);
  ASSERT_EQ(rent["items"].size(), 1u);
  EXPECT_EQ(rent["items"][0]["gpu_model"], "H100-80GB");
  EXPECT_EQ(rent["items"][0]["quotes"][0]["provider"], "cloudco");
  const ClientResponse rent_csv =
      daemon_.request("GET", "/v1/finance/buy-or-rent?format=csv", "", op_key_);
  EXPECT_NE(rent_csv.body.find("\r\nH100-80GB,"), std::string::npos) << rent_csv.body;
}

TEST_F(FinanceApiTest, BadReportQueriesAreRefused) {
  for (const char* query : {"month=2026-13", "by=rack", "price_factor=abc", "utilisation=1.5",
                            "price_factor=-1", "format=pdf"}) {
    expect_refused("GET", std::string("/v1/finance/report?") + query, nullptr, op_key_, 400,
                   "invalid_argument");
  }
  expect_refused("GET", "/v1/finance/report?colour=red", nullptr, op_key_, 400, "unknown_field");
}

TEST_F(FinanceApiTest, BadInputIsRefusedWithItsCodeAndChangesNothing) {
  join_node("gpu-4", "eu-west");
  join_node("gpu-5", "eu-west");
  const std::string id =
      call("POST", "/v1/finance/assets", asset_body("gpu-5", "1000", 12), op_key_, 201)
          .value("id", "");
  auto with = [&](const char* field, const json& value) {
    json body = asset_body("gpu-4", "120000", 12);
    body[field] = value;
    return body;
  };
  const json loan = {
      {"kind", "loan"}, {"principal", "1000"}, {"annual_rate", "0.05"}, {"term_months", 0}};
  const std::string assets = "/v1/finance/assets";
  const std::vector<Case> cases = {
      {"POST", assets, with("cost", "-1"), 400, "invalid_argument"},
      {"POST", assets, with("life_months", -12), 400, "invalid_argument"},
      {"POST", assets, with("financing", loan), 400, "invalid_argument"},
      {"POST", assets, with("salvage", "120000.01"), 400, "invalid_argument"},
      {"POST", assets, with("nodes", {"no-such-node"}), 404, "not_found"},
      {"POST", assets, with("nodes", {"gpu-5"}), 409, "conflict"},
      {"POST", assets, with("cost", "12,5"), 400, "invalid_argument"},
      {"POST", assets, with("power_kw", "ten"), 400, "invalid_argument"},
      {"POST", assets, with("declining_factor", "2.0001"), 400, "invalid_argument"},
      {"POST", assets,
       with("financing", {{"kind", "loan"},
                          {"principal", "1000"},
                          {"annual_rate", "0.0650001"},
                          {"term_months", 12}}),
       400, "invalid_argument"},
      {"POST", assets, with("financing", {{"kind", "barter"}}), 400, "invalid_argument"},
      {"POST", assets, with("financing", {{"kind", "cash"}, {"colour", "red"}}), 400,
       "unknown_field"},
      {"POST", assets, with("method", "sum_of_years"), 400, "invalid_argument"},
      {"POST", assets, with("in_service", "yesterday"), 400, "invalid_argument"},
      {"POST", assets, with("colour", "red"), 400, "unknown_field"},
      {"POST", assets, with("life_months", "12"), 400, "invalid_type"},
      {"POST", assets, {{"name", "x"}, {"nodes", {"gpu-4"}}}, 400, "missing_field"},
      {"POST",
       assets + "/ast_ffffffffffffffff/estimates",
       {{"from_month", "2027-01"}, {"life_months", 24}},
       404,
       "not_found"},
      {"POST", assets + "/x/retire", json::object(), 400, "invalid_id"},
      {"POST",
       assets + "/" + id + "/estimates",
       {{"from_month", "2027-1"}, {"life_months", 24}},
       400,
       "invalid_argument"},
      {"POST",
       assets + "/" + id + "/estimates",
       {{"from_month", "2027-01"}, {"life_months", 24}, {"salvage", "5000"}},
       400,
       "invalid_argument"},
  };
  for (const Case& c : cases) expect_refused(c.method, c.target, c.body, op_key_, c.status, c.code);
}

TEST_F(FinanceApiTest, BadSitesCostsAndRentalPricesAreRefusedAndChangeNothing) {
  const std::string site = "/v1/finance/sites/eu-west";
  const std::vector<Case> cases = {
      {"PUT", site, {{"pue", "0.9"}}, 400, "invalid_argument"},
      {"PUT", site, {{"pue", "1.2.3"}}, 400, "invalid_argument"},
      {"PUT", site, {{"colocation_per_kw_month", "-150"}}, 400, "invalid_argument"},
      {"POST",
       site + "/power-prices",
       {{"price_per_kwh", "0.21"}, {"from", "2000-01-01T00:00:00Z"}},
       400,
       "invalid_argument"},
      {"POST", site + "/power-prices", {{"price_per_kwh", "-0.21"}}, 400, "invalid_argument"},
      {"POST", site + "/carbon", {{"g_per_kwh", "380"}}, 400, "invalid_type"},
      {"POST", site + "/carbon", json::object(), 400, "missing_field"},
      {"POST", "/v1/finance/costs", {{"name", "x"}, {"monthly", "-5"}}, 400, "invalid_argument"},
      {"POST",
       "/v1/finance/costs",
       {{"name", "x"}, {"monthly", "5"}, {"rule", "by_magic"}},
       400,
       "invalid_argument"},
      {"POST",
       "/v1/finance/costs",
       {{"name", "x"}, {"monthly", "5"}, {"from_month", "2026/01"}},
       400,
       "invalid_argument"},
      {"DELETE", "/v1/finance/costs/fxc_ffffffffffffffff", nullptr, 404, "not_found"},
      {"PUT",
       "/v1/finance/rental-prices",
       {{"provider", "cloudco"}, {"gpu_model", "Z80"}, {"price_per_gpu_hour", "2.49"}},
       400,
       "invalid_argument"},
      {"PUT",
       "/v1/finance/rental-prices",
       {{"provider", "cloudco"}, {"gpu_model", "H100-80GB"}, {"price_per_gpu_hour", "0"}},
       400,
       "invalid_argument"},
  };
  for (const Case& c : cases) expect_refused(c.method, c.target, c.body, op_key_, c.status, c.code);
}

TEST_F(FinanceApiTest, OnlyOperatorAdminsMayReadOrChangeTheBooks) {
  join_node("gpu-6", "eu-west");
  const std::string id =
      call("POST", "/v1/finance/assets", asset_body("gpu-6", "1000", 12), op_key_, 201)
          .value("id", "");
  const std::string cost =
      call("POST", "/v1/finance/costs", {{"name", "staff"}, {"monthly", "1"}}, op_key_, 201)
          .value("id", "");
  const std::vector<std::tuple<std::string, std::string, json>> routes = {
      {"POST", "/v1/finance/assets", asset_body("gpu-6", "1000", 12)},
      {"GET", "/v1/finance/assets", nullptr},
      {"GET", "/v1/finance/assets/" + id, nullptr},
      {"GET", "/v1/finance/assets/" + id + "?format=csv", nullptr},
      {"POST",
       "/v1/finance/assets/" + id + "/estimates",
       {{"from_month", "2099-01"}, {"life_months", 24}}},
      {"POST", "/v1/finance/assets/" + id + "/retire", json::object()},
      {"PUT", "/v1/finance/sites/eu-west", {{"pue", "1.2"}}},
      {"POST", "/v1/finance/sites/eu-west/power-prices", {{"price_per_kwh", "0.2"}}},
      {"POST", "/v1/finance/sites/eu-west/carbon", {{"g_per_kwh", 300}}},
      {"GET", "/v1/finance/sites", nullptr},
      {"POST", "/v1/finance/costs", {{"name", "x"}, {"monthly", "1"}}},
      {"GET", "/v1/finance/costs", nullptr},
      {"DELETE", "/v1/finance/costs/" + cost, nullptr},
      {"PUT",
       "/v1/finance/rental-prices",
       {{"provider", "c"}, {"gpu_model", "H100-80GB"}, {"price_per_gpu_hour", "1"}}},
      {"GET", "/v1/finance/rental-prices", nullptr},
      {"GET", "/v1/finance/report", nullptr},
      {"GET", "/v1/finance/report?format=csv", nullptr},
      {"GET", "/v1/finance/payback", nullptr},
      {"GET", "/v1/finance/buy-or-rent", nullptr},
  };
  for (const auto& [method, target, body] : routes) {
    expect_refused(method, target, body, a_.admin_key, 403, "forbidden");
    expect_refused(method, target, body, a_.member_key, 403, "forbidden");
  }
}

TEST_F(FinanceApiTest, TheBooksSurviveARestart) {
  join_node("gpu-7", "eu-west");
  json body = asset_body("gpu-7", "50000", 36);
  body["financing"] = {{"kind", "lease"}, {"monthly_payment", "1200"}, {"term_months", 36}};
  body["method"] = "declining_balance";
  const std::string id = call("POST", "/v1/finance/assets", body, op_key_, 201).value("id", "");
  call("PUT", "/v1/finance/sites/eu-west", {{"pue", "1.25"}}, op_key_, 200);
  call("POST", "/v1/finance/sites/eu-west/power-prices", {{"price_per_kwh", "0.2"}}, op_key_, 201);
  call("POST", "/v1/finance/costs", {{"name", "network"}, {"monthly", "800"}}, op_key_, 201);
  call("PUT", "/v1/finance/rental-prices",
       {{"provider", "c"}, {"gpu_model", "H100-80GB"}, {"price_per_gpu_hour", "1.99"}}, op_key_,
       200);
  const std::string asset = call("GET", "/v1/finance/assets/" + id, nullptr, op_key_, 200).dump();
  const std::string before = everything();
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(call("GET", "/v1/finance/assets/" + id, nullptr, op_key_, 200).dump(), asset);
  EXPECT_EQ(everything(), before);
}

}  // namespace
}  // namespace allot::testing
