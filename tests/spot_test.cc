// Spot prices that follow utilisation, end to end: allotd with a real agent, a rule set through
// the API, spot work that fills the GPUs and moves the price along the curve, spot work priced out
// of its maximum preempted, and the history shown by `allot spot`.
#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class SpotTest : public ClusterTest {
 protected:
  SpotTest() {
    agent_count_ = 1;
    free_prices_ = false;  // Its rule sets the spot price.
  }

  json rule() {
    const json rules = operator_call("GET", "/v1/spot-rules", 200);
    return rules["items"].empty() ? json::object() : rules["items"][0];
  }

  RunResult allot(const std::vector<std::string>& args) {
    return run_program(
        bin_dir() + "/src/cli/allot", args,
        {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + daemon_.admin_key(), "HOME=/nonexistent"});
  }
};

TEST_F(SpotTest, TheSpotPriceFollowsUtilisationAndPricesOutThriftyWork) {
  const RunResult set = allot({"-o", "json", "spot", "set", "--model", "H100-80GB", "--region",
                               "default", "--curve", "0:1.00,50:2.00,100:4.00", "--interval", "1"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  // Idle: the first point of the curve.
  ASSERT_TRUE(eventually([&] { return rule().value("spot_price_now", json()) == "1.000000"; }))
      << rule().dump();

  const std::string thrifty = launch(
      {{"gpus", 4}, {"price_class", "spot"}, {"max_price", "1.50"}, {"command", {"sleep", "60"}}});
  const std::string keen =
      launch({{"gpus", 2}, {"price_class", "spot"}, {"command", {"sleep", "60"}}});
  ASSERT_TRUE(instance_reaches(keen, "running"));
  // With 6 of 8 GPUs taken the price climbs past the thrifty work's 1.50 (to 3.00, or to 2.00 if
  // the rule looked between the two launches), and the thrifty work is preempted.
  ASSERT_TRUE(instance_reaches(thrifty, "preempted")) << instance(thrifty).dump();
  EXPECT_EQ(instance(keen)["state"], "running");
  // Then 2 of 8 GPUs: 1.50, a quarter of the way along the curve.
  ASSERT_TRUE(eventually([&] { return rule().value("spot_price_now", json()) == "1.500000"; }))
      << rule().dump();
  EXPECT_EQ(rule()["curve_price_now"], "1.500000");
  EXPECT_EQ(rule()["utilisation_pct"], "25.0");

  // The history keeps every step; the CLI shows it.
  const json history = rule()["history"];
  ASSERT_GE(history.size(), 3U) << history.dump();
  EXPECT_EQ(history.front()["gpu_hour"], "1.000000");
  EXPECT_TRUE(history[1]["gpu_hour"] == "3.000000" || history[1]["gpu_hour"] == "2.000000")
      << history.dump();
  EXPECT_EQ(history.back()["gpu_hour"], "1.500000");
  const RunResult shown = allot({"spot", "history", "--model", "H100-80GB", "--region", "default"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("1.500000"), std::string::npos) << shown.out;

  // A curve that falls back in utilisation is refused with its code, and the rule stays.
  const RunResult bad = allot({"spot", "set", "--model", "H100-80GB", "--region", "default",
                               "--curve", "0:1.00,50:2.00,40:3.00,100:4.00"});
  EXPECT_EQ(bad.exit_code, 5) << bad.out;
  EXPECT_NE(bad.err.find("invalid_argument"), std::string::npos) << bad.err;
  EXPECT_EQ(rule()["curve"].size(), 3U);

  const RunResult removed =
      allot({"spot", "delete", "--model", "H100-80GB", "--region", "default"});
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_TRUE(operator_call("GET", "/v1/spot-rules", 200)["items"].empty());
}

}  // namespace
}  // namespace allot::testing
