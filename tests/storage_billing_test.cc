// Storage billed through allotd: the operator sets a region's storage price (API and CLI), a tenant
// keeps a volume for a few seconds, and the ledger's postings, the month's invoice line, the usage
// report and the P&L all hold the same amount, exact to the micro-unit. Bad prices and callers who
// may not set them are refused and change nothing; another tenant sees none of it.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/money.h"
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class StorageBillingTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    daemon_.set_free_prices("default");
  }

  // Polls `done` for up to 20 s.
  static bool eventually(const std::function<bool()>& done) {
    for (int i = 0; i < 200; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  }

  static int64_t seconds_at(const json& time) {
    return *parse_time(time.get<std::string>()) / 1000;
  }

  // The tenant's ledger lines of one code, summed (debits are negative).
  int64_t posted(const std::string& tenant, const std::string& code) {
    const json statement =
        call("GET", "/v1/tenants/" + tenant + "/ledger?limit=1000", nullptr, op_key_, 200);
    int64_t sum = 0;
    for (const json& line : statement["items"]) {
      if (line["code"] == code) sum += Money::parse(line["amount"].get<std::string>())->micros();
    }
    return sum;
  }
};

TEST_F(StorageBillingTest, AVolumesStorageIsPostedInvoicedReportedAndInTheProfitAndLoss) {
  // 0.10 a GB-month of 730 hours.
  const RunResult set = run_program(
      bin_dir() + "/src/cli/allot",
      {"prices", "set", "--storage-gb-month", "0.10", "--region", "default", "--output", "json"},
      {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + op_key_, "HOME=/nonexistent"});
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_NE(set.out.find("\"storage_gb_month\": \"0.100000\""), std::string::npos) << set.out;
  // A price set within a second applies from the next whole second: the volume is made after.
  const json price = json::parse(set.out);
  const TimeMs priced_from_ms =
      (*parse_time(price["effective_at"].get<std::string>()) / 1000 + 1) * 1000;
  while (SystemClock().now_ms() < priced_from_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  json listed = call("GET", "/v1/prices?gpu_model=storage", nullptr, a_.member_key, 200);
  ASSERT_EQ(listed["items"].size(), 1U) << listed;
  EXPECT_EQ(listed["items"][0]["region"], "default");

  const json made =
      call("POST", "/v1/volumes", {{"name", "ckpt"}, {"size_gb", 7777}}, a_.member_key, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(2'500));
  const json gone = call("DELETE", "/v1/volumes/ckpt", nullptr, a_.member_key, 200);
  const int64_t seconds = seconds_at(gone["deleted_at"]) - seconds_at(made["created_at"]);
  ASSERT_GE(seconds, 2);
  // floor(rate x GB x seconds / 2,628,000), in micro-units.
  const int64_t expected = int64_t{100'000} * 7'777 * seconds / 2'628'000;
  ASSERT_GT(expected, 0);

  // The ledger posts it from the tenant's account once the volume is gone.
  ASSERT_TRUE(eventually([&] { return posted(a_.tenant_id, "storage") == -expected; }))
      << posted(a_.tenant_id, "storage") << " posted, " << expected << " expected";

  const std::string month = format_month(*parse_time(made["created_at"].get<std::string>()));
  const json invoice =
      call("POST", "/v1/invoices", {{"tenant_id", a_.tenant_id}, {"month", month}}, op_key_, 201);
  const std::string amount = Money::from_micros(expected).to_string();
  json storage_line;
  for (const json& line : invoice["lines"]) {
    if (line["kind"] == "storage") storage_line = line;
  }
  ASSERT_FALSE(storage_line.is_null()) << invoice.dump();
  EXPECT_EQ(storage_line["amount"], amount) << invoice.dump();
  EXPECT_EQ(storage_line["gb_seconds"], 7'777 * seconds);
  EXPECT_EQ(storage_line["region"], "default");
  EXPECT_EQ(storage_line["project_id"], a_.project_id);
  EXPECT_EQ(invoice["total"], amount);

  const json usage = call("GET", "/v1/usage?group_by=gpu_model", nullptr, a_.admin_key, 200);
  ASSERT_EQ(usage["items"].size(), 1U) << usage;
  EXPECT_EQ(usage["items"][0]["key"], "storage");
  EXPECT_EQ(usage["items"][0]["spend"], amount);
  // The other tenant's report has none of it.
  EXPECT_EQ(call("GET", "/v1/usage", nullptr, b_.admin_key, 200)["total"]["spend"], "0.000000");

  const json pnl =
      call("GET", "/v1/finance/report?month=" + month + "&by=total", nullptr, op_key_, 200);
  ASSERT_EQ(pnl["storage"].size(), 1U) << pnl;
  EXPECT_EQ(pnl["storage"][0]["region"], "default");
  EXPECT_EQ(pnl["storage"][0]["revenue"], amount);
  EXPECT_EQ(pnl["totals"]["storage_revenue"], amount);
  EXPECT_EQ(pnl["totals"]["revenue"], amount);
}

TEST_F(StorageBillingTest, BadStoragePricesAndCallersWhoMayNotSetThemAreRefused) {
  auto state = [&] { return snapshot() + call("GET", "/v1/prices", nullptr, op_key_, 200).dump(); };
  const std::string before = state();
  const Refusal refusals[] = {
      {{{"region", "default"}, {"storage_gb_month", "-0.10"}}, 400, "invalid_argument"},
      {{{"region", "default"}, {"storage_gb_month", "ten"}}, 400, "invalid_argument"},
      {{{"region", "Not A Region"}, {"storage_gb_month", "0.10"}}, 400, "invalid_argument"},
      {{{"storage_gb_month", "0.10"}}, 400, "missing_field"},
      // A storage price has no model, class or GPU rate.
      {{{"region", "default"}, {"storage_gb_month", "0.10"}, {"gpu_model", "H100-80GB"}},
       400,
       "unknown_field"},
      {{{"region", "default"}, {"storage_gb_month", "0.10"}, {"price_class", "spot"}},
       400,
       "unknown_field"},
      {{{"region", "default"}, {"storage_gb_month", "0.10"}, {"gpu_hour", "1"}},
       400,
       "unknown_field"},
      {{{"region", "default"},
        {"storage_gb_month", "0.10"},
        {"effective_at", "2020-01-01T00:00:00Z"}},
       400,
       "invalid_argument"},
  };
  for (const Refusal& r : refusals) {
    const json answer = call("PUT", "/v1/prices", r.body, op_key_, r.status);
    EXPECT_EQ(answer["error"]["code"], r.code) << r.body << " -> " << answer;
  }
  const json body = {{"region", "default"}, {"storage_gb_month", "0.10"}};
  for (const std::string* key : {&a_.admin_key, &a_.member_key}) {
    EXPECT_EQ(call("PUT", "/v1/prices", body, *key, 403)["error"]["code"], "forbidden");
  }
  EXPECT_EQ(daemon_.request("PUT", "/v1/prices", body.dump(), "").status, 401);
  EXPECT_EQ(state(), before);
}

}  // namespace
}  // namespace allot::testing
