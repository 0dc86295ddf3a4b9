// allot quote, latency and run's region wishes against a real allotd: the same request over
// different catalogs (prices, carbon, latency, limits) comes out in the expected order, and bad
// input is refused with its code and changes nothing.
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/url.h"
#include "support/cli_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

// Three regions with one node of two H100s each, heard from so that they take work.
class QuoteCliTest : public OperatorCliTest {
 protected:
  void SetUp() override {
    // The nodes are heard from once: under the test build's sanitizers the test outlasts the
    // default 30 s after which a silent node is lost.
    daemon_.set_extra_args({"--heartbeat-timeout-ms", "600000"});
    OperatorCliTest::SetUp();
    for (const char* region : {"eu", "us", "north"})
      node_ids_[region] = join_node(std::string("gpu-") + region, region);
  }

  // Runs a catalog line such as "prices set --model H100-80GB --region eu --gpu-hour 3".
  void configure(const std::string& line) {
    std::vector<std::string> args;
    std::istringstream words(line);
    for (std::string word; words >> word;) args.push_back(word);
    const RunResult result = allot(args);
    ASSERT_EQ(result.exit_code, 0) << line << ": " << result.err;
  }

  std::map<std::string, std::string> node_ids_;
};

struct QuoteCase {
  std::string name;
  std::vector<std::string> catalog;  // allot commands, run in order.
  std::vector<std::string> flags;    // allot quote's flags.
  std::vector<std::string> order;    // Regions, best first.
  std::vector<std::pair<std::string, std::string>> excluded = {};
  std::string first_why = "";
};

// The prices most cases share: us is cheapest, north dearest.
const std::vector<std::string> kPrices = {
    "prices set --model H100-80GB --region eu --gpu-hour 3.00",
    "prices set --model H100-80GB --region us --gpu-hour 2.40",
    "prices set --model H100-80GB --region north --gpu-hour 4.00",
};

std::vector<std::string> with_prices(std::vector<std::string> more) {
  std::vector<std::string> out = kPrices;
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

class QuoteTableTest : public QuoteCliTest, public ::testing::WithParamInterface<QuoteCase> {};

TEST_P(QuoteTableTest, TheSameRequestRanksAsTheCatalogSays) {
  const QuoteCase& c = GetParam();
  for (const std::string& line : c.catalog) configure(line);
  std::vector<std::string> args = {"quote", "--gpus", "2"};
  args.insert(args.end(), c.flags.begin(), c.flags.end());
  const json quote = allot_json(args);
  std::vector<std::string> order;
  for (const json& option : quote["options"]) order.push_back(option.value("region", ""));
  EXPECT_EQ(order, c.order) << quote.dump(2);
  std::vector<std::pair<std::string, std::string>> excluded;
  for (const json& e : quote["excluded"]) {
    excluded.emplace_back(e.value("region", ""), e.value("reason", ""));
  }
  EXPECT_EQ(excluded, c.excluded) << quote.dump(2);
  if (!c.first_why.empty() && !quote["options"].empty()) {
    EXPECT_EQ(quote["options"][0]["why"], c.first_why);
  }
  // The table shows the same ranking, with the reasons.
  args.insert(args.begin(), {"-o", "table"});
  const RunResult table = allot(args);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  if (!c.order.empty()) {
    EXPECT_NE(table.out.find(c.order.front()), std::string::npos) << table.out;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Catalogs, QuoteTableTest,
    ::testing::Values(QuoteCase{.name = "ByPriceTheCheapestRegionComesFirst",
                                .catalog = kPrices,
                                .flags = {"--prefer", "price"},
                                .order = {"us", "eu", "north"},
                                .first_why = "cheapest: 4.800000/h, 1.200000 below next"},
                      QuoteCase{
                          .name = "ByCarbonTheCleanestGridComesFirstWhateverItCosts",
                          .catalog = with_prices({"finance carbon eu 300", "finance carbon us 450",
                                                  "finance carbon north 20"}),
                          .flags = {"--prefer", "carbon"},
                          .order = {"north", "eu", "us"},
                          .first_why = "cleanest: 28.000 g/h, 392.000 g/h below next"},
                      QuoteCase{.name = "ByLatencyTheRegionClosestToTheUsersComesFirst",
                                .catalog = with_prices({"latency set eu-users eu 12",
                                                        "latency set eu-users north 30",
                                                        "latency set eu-users us 95"}),
                                .flags = {"--prefer", "latency", "--from", "eu-users"},
                                .order = {"eu", "north", "us"},
                                .first_why = "closest: 12 ms, 18 ms below next"},
                      QuoteCase{.name = "RegionsWithNoLatencyFromTheUsersAreLeftOut",
                                .catalog = with_prices({"latency set eu-users eu 12"}),
                                .flags = {"--prefer", "latency", "--from", "eu-users"},
                                .order = {"eu"},
                                .excluded = {{"us", "no latency known from eu-users"},
                                             {"north", "no latency known from eu-users"}}},
                      QuoteCase{.name = "AMaximumPriceLeavesOutTheDearRegion",
                                .catalog = kPrices,
                                .flags = {"--max-price", "3"},
                                .order = {"us", "eu"},
                                .excluded = {{"north", "over max price 3.000000"}}},
                      QuoteCase{.name = "AllowedRegionsKeepTheWorkInThemEvenWhenDearer",
                                .catalog = kPrices,
                                .flags = {"--regions", "eu,north"},
                                .order = {"eu", "north"},
                                .excluded = {{"us", "not in allowed regions"}}}),
    [](const ::testing::TestParamInfo<QuoteCase>& info) { return info.param.name; });

TEST_F(QuoteCliTest, BadQuotesAndLatenciesAreRefusedWithTheirCodesAndChangeNothing) {
  configure("latency set eu-users eu 12");
  const std::vector<std::vector<std::string>> bad = {
      {"quote", "--prefer", "speed"},
      {"quote", "--prefer", "latency"},
      {"quote", "--max-price", "-1"},
      {"quote", "--regions", "eu,,us"},
      {"quote", "--gpus", "9"},
      {"latency", "set", "eu-users", "eu", "--", "-5"},
      {"latency", "set", "eu-users", "a b", "5"},
  };
  for (const auto& args : bad) {
    const RunResult refused = allot(args);
    EXPECT_EQ(refused.exit_code, 5) << args[1] << " " << refused.err;
    EXPECT_NE(refused.err.find("invalid_argument"), std::string::npos) << refused.err;
  }
  const json listed = allot_json({"latency", "list"});
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["rtt_ms"], 12);
  EXPECT_EQ(allot({"latency", "delete", "us-users", "eu"}).exit_code, 4);
  EXPECT_FALSE(allot_json({"latency", "delete", "eu-users", "eu"})["deleted_at"].is_null());
  EXPECT_TRUE(allot_json({"latency", "list"}).empty());
}

TEST_F(QuoteCliTest, LatencyFromANamedPlaceWithSpacesListsPagesAndDeletes) {
  ASSERT_EQ(allot({"latency", "set", "eu users", "eu", "12"}).exit_code, 0);
  ASSERT_EQ(allot({"latency", "set", "eu users", "north", "30"}).exit_code, 0);
  ASSERT_EQ(allot({"latency", "set", "us-users", "us", "9"}).exit_code, 0);
  const json mine = allot_json({"latency", "list", "--from", "eu users"});
  ASSERT_EQ(mine.size(), 2u) << mine.dump();
  EXPECT_EQ(mine[0]["region"], "eu");
  EXPECT_EQ(mine[1]["region"], "north");
  EXPECT_EQ(allot_json({"latency", "list", "--limit", "1"}).size(), 1u);

  // The API pages the table like every other listing, and refuses a bad limit.
  std::vector<std::string> regions;
  std::string after;
  for (int page = 0; page < 4; ++page) {
    const std::string target =
        "/v1/latency?limit=2" + (after.empty() ? "" : "&after=" + percent_encode(after));
    const ClientResponse answer = daemon_.request("GET", target, "", daemon_.admin_key());
    ASSERT_EQ(answer.status, 200) << answer.body;
    const json body = json::parse(answer.body);
    for (const json& item : body["items"]) regions.push_back(item["region"]);
    if (body["next_after"].is_null()) break;
    after = body["next_after"];
  }
  EXPECT_EQ(regions, (std::vector<std::string>{"eu", "north", "us"}));
  EXPECT_EQ(daemon_.request("GET", "/v1/latency?limit=0", "", daemon_.admin_key()).status, 400);

  EXPECT_FALSE(allot_json({"latency", "delete", "eu users", "eu"})["deleted_at"].is_null());
  EXPECT_EQ(allot_json({"latency", "list", "--from", "eu users"}).size(), 1u);
}

TEST_F(QuoteCliTest, TheCatalogShowsEachRegionsGpusPricesCarbonAndLatency) {
  for (const std::string& line : with_prices({"finance carbon eu 300", "latency set eu-users eu 12",
                                              "finance site set eu --pue 1.2"})) {
    configure(line);
  }
  const json regions = allot_json({"regions"});
  ASSERT_EQ(regions.size(), 3u) << regions.dump(2);
  const json& eu = regions[0];
  EXPECT_EQ(eu["region"], "eu");
  EXPECT_EQ(eu["models"][0]["free_gpus"], 2);
  EXPECT_EQ(eu["models"][0]["on_demand_gpu_hour"], "3.000000");
  EXPECT_TRUE(eu["models"][0]["spot_gpu_hour"].is_null());
  EXPECT_EQ(eu["carbon_g_per_kwh"], 300);
  EXPECT_EQ(eu["pue"], "1.200");
  EXPECT_EQ(eu["latency_ms"]["eu-users"], 12);
}

TEST_F(QuoteCliTest, RunKeepsToItsRegionsAndGoesWhereItPrefers) {
  for (const std::string& line : with_prices({"finance carbon eu 300", "finance carbon us 450",
                                              "finance carbon north 20", "projects create p"})) {
    configure(line);
  }
  // Preferring carbon: the cleanest region's node, though it is the dearest.
  const json clean = allot_json({"run", "--gpus", "1", "--prefer", "carbon", "--", "true"});
  const json placed = allot_json({"describe", "instance", clean.value("id", "")});
  EXPECT_EQ(placed["node_id"], node_ids_["north"]) << placed.dump(2);
  EXPECT_EQ(placed["spec"]["prefer"], "carbon");
  // A region with no price: refused, since the work would run uncharged, and no instance is made.
  const size_t listed = allot_json({"ps", "--all"}).size();
  const RunResult unpriced = allot({"run", "--gpus", "1", "--regions", "mars", "--", "true"});
  EXPECT_NE(unpriced.exit_code, 0);
  EXPECT_NE(unpriced.err.find("no_price: no on-demand price is set for any GPU model in regions "
                              "mars"),
            std::string::npos)
      << unpriced.err;
  EXPECT_EQ(allot_json({"ps", "--all"}).size(), listed);
  // Priced there but with no node yet: it waits, and says which limit holds it.
  configure("prices set --model H100-80GB --region mars --gpu-hour 1");
  const json held = allot_json({"run", "--gpus", "1", "--regions", "mars", "--", "true"});
  const json waiting = allot_json({"describe", "instance", held.value("id", "")});
  EXPECT_EQ(waiting["state"], "queued");
  EXPECT_NE(waiting.value("reason", "").find("not in the allowed regions (mars)"),
            std::string::npos)
      << waiting.dump(2);
  // A maximum price below every on-demand price: it waits too, naming the price.
  const json dear = allot_json({"run", "--gpus", "1", "--max-price", "2", "--", "true"});
  const json priced = allot_json({"describe", "instance", dear.value("id", "")});
  EXPECT_NE(priced.value("reason", "").find("over max price 2.000000"), std::string::npos)
      << priced.dump(2);
  // Latency with no location is refused, and no instance is made.
  const size_t before = allot_json({"ps"}).size();
  EXPECT_EQ(allot({"run", "--prefer", "latency", "--", "true"}).exit_code, 5);
  EXPECT_EQ(allot_json({"ps"}).size(), before);
}

}  // namespace
}  // namespace allot::testing
