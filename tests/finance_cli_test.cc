// allot finance against a real allotd: the operator registers an asset and the rest of the books,
// reads the schedules and the month's report as tables, JSON and CSV, and gets the exit codes of
// refusals.
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "support/cli_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class FinanceCliTest : public OperatorCliTest {
 protected:
  // A node's asset (bought on a loan), its site with rates, a fixed cost and a rental price, each
  // made through the CLI; returns the asset's id.
  std::string keep_books() {
    join_node("gpu-1", "eu-west");
    std::vector<std::string> add;
    std::istringstream words(
        "finance assets add --name rack-1 --node gpu-1 --cost 120000 --life 12 --power-kw 10.5 "
        "--financing loan --principal 60000 --rate 0.065 --term 12 --in-service " +
        month_ + "-01T00:00:00Z");
    for (std::string word; words >> word;) add.push_back(word);
    const json asset = allot_json(add);
    EXPECT_EQ(asset["financing"]["annual_rate"], "0.065000");
    EXPECT_EQ(asset["schedules"]["depreciation"][0]["depreciation"], "10000.000000");
    const json site =
        allot_json({"finance", "site", "set", "eu-west", "--pue", "1.3", "--colocation", "150"});
    EXPECT_EQ(site["pue"], "1.300");
    EXPECT_EQ(allot_json({"finance", "power-price", "eu-west", "0.21"})["power_prices"].size(), 1u);
    EXPECT_EQ(allot_json({"finance", "carbon", "eu-west", "380"})["carbon"][0]["g_per_kwh"], 380);
    allot_json({"finance", "costs", "add", "--name", "staff", "--monthly", "9000"});
    EXPECT_EQ(allot_json({"finance", "rent", "set", "cloudco", "H100-80GB", "2.49"})["provider"],
              "cloudco");
    return asset.value("id", "");
  }

  const std::string month_ = format_month(SystemClock().now_ms());
};

TEST_F(FinanceCliTest, TheOperatorKeepsTheBooks) {
  const std::string id = keep_books();
  const RunResult table = allot({"finance", "assets", "list"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("IN-SERVICE"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;
  const RunResult csv = allot({"finance", "assets", "show", id, "--csv"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(csv.out.starts_with("month,depreciation,book_end,")) << csv.out;
  EXPECT_NE(csv.out.find("\r\n" + month_ + ",10000.000000,110000.000000,"), std::string::npos)
      << csv.out;
  const json costs = allot_json({"finance", "costs", "list"});
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_EQ(allot_json({"finance", "rent", "list"}).size(), 1u);
  EXPECT_EQ(allot_json({"finance", "site", "list"}).size(), 1u);

  // Refusals exit 5 and say why; what does not exist exits 4.
  const RunResult bad = allot({"finance", "site", "set", "eu-west", "--pue", "0.9"});
  EXPECT_EQ(bad.exit_code, 5);
  EXPECT_NE(bad.err.find("invalid_argument"), std::string::npos) << bad.err;
  EXPECT_EQ(allot({"finance", "assets", "show", "ast_ffffffffffffffff"}).exit_code, 4);
  const std::string cost = costs[0].value("id", "");
  EXPECT_FALSE(allot_json({"finance", "costs", "delete", cost})["deleted_at"].is_null());
  EXPECT_FALSE(allot_json({"finance", "assets", "retire", id, "--proceeds", "1000"})["retired_at"]
                   .is_null());
}

TEST_F(FinanceCliTest, TheOperatorReadsTheMonth) {
  const std::string id = keep_books();
  const json report = allot_json({"finance", "report", "--by", "total", "--price-factor", "1.1"});
  EXPECT_TRUE(report["groups"][0].contains("what_if")) << report.dump();
  // The month runs: what it has cost so far, and the whole of it in full. 10,000 of depreciation,
  // 60,000 x 6.5 % / 12 of interest, 10.5 kW at 150 and the staff's 9,000.
  EXPECT_EQ(report["month_to_date"], true);
  EXPECT_EQ(report["totals"]["whole_month_projected"]["costs"], "20900.000000") << report.dump();
  const RunResult table = allot({"finance", "report"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(table.out.starts_with("month to date, through " + month_)) << table.out;
  EXPECT_NE(table.out.find("BREAK-EVEN"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" 0.0% "), std::string::npos) << table.out;  // Utilisation, labelled.
  EXPECT_NE(table.out.find("NET_REVENUE:"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("WHOLE_MONTH_PROJECTED.MARGIN:"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" -20900.000000\n"), std::string::npos) << table.out;
  const RunResult csv = allot({"finance", "report", "--month", month_, "--csv"});
  EXPECT_TRUE(csv.out.starts_with("key,nodes,gpus,revenue,")) << csv.out;
  EXPECT_NE(csv.out.find("\r\ngpu-1,1,2,"), std::string::npos) << csv.out;
  EXPECT_EQ(allot({"finance", "report", "--by", "rack"}).exit_code, 5);
  EXPECT_EQ(allot_json({"finance", "payback"})["items"][0]["asset_id"], id);
  const RunResult rent = allot({"finance", "buy-or-rent"});
  EXPECT_NE(rent.out.find("cloudco"), std::string::npos) << rent.out;
  EXPECT_TRUE(allot({"finance", "buy-or-rent", "--csv"}).out.starts_with("gpu_model,"));
}

}  // namespace
}  // namespace allot::testing
