// The spot price rule in the core: the curve is interpolated to the micro-unit, bad rules are
// refused and change nothing, and the spot price follows utilisation at the rule's interval,
// leaving each change in the price catalog's history and preempting spot work priced out of it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/pools/spot_rules.h"
#include "core/test_core.h"

namespace allot {
namespace {

const meter::PriceKey kSpotKey{
    .model = "H100-80GB", .region = "eu", .price_class = PriceClass::kSpot};

// 1.00 per GPU-hour when idle, 2.00 at half the GPUs allocated, 4.00 when all are.
SpotRule rule() {
  return SpotRule{.model = "H100-80GB",
                  .region = "eu",
                  .curve = {{0, 1 * kUnit}, {50, 2 * kUnit}, {100, 4 * kUnit}},
                  .interval_ms = 60'000};
}

TEST(PriceOnCurve, InterpolatesBetweenPointsAndRoundsDown) {
  const std::vector<CurvePoint> curve = rule().curve;
  struct Case {
    const char* what;
    int64_t permille;
    int64_t micros;
  };
  const Case cases[] = {
      {"idle is the first point", 0, 1 * kUnit},
      {"a quarter is half-way up the first segment", 250, 1'500'000},
      {"half is the middle point", 500, 2 * kUnit},
      {"three quarters is half-way up the second segment", 750, 3 * kUnit},
      {"full is the last point", 1000, 4 * kUnit},
      {"one thousandth rounds down", 1, 1'002'000},
      {"above full stays at the last point", 1200, 4 * kUnit},
      {"below idle stays at the first point", -5, 1 * kUnit},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(price_on_curve(curve, c.permille), c.micros) << c.what;
  }
  EXPECT_EQ(price_on_curve({{0, 7}, {100, 8}}, 333), 7) << "a third of one micro-unit is none";
  EXPECT_EQ(price_on_curve({{0, 8}, {100, 7}}, 333), 7) << "a falling curve rounds down too";
}

class SpotRulesTest : public CoreTest {
 protected:
  void SetUp() override {
    for (const Command& c : one_node_cloud(kTenant1, kProject1, kNode1, kToken)) ok(c);
  }

  // Starts spot work of `gpus` GPUs at `at`, paying at most `max_micros` per GPU-hour.
  std::string run_spot(int gpus, int64_t max_micros, TimeMs at) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    ok(CreateInstance{id, kTenant1, kProject1, "usr_1",
                      InstanceSpec{.gpus = gpus,
                                   .price_class = PriceClass::kSpot,
                                   .command = {"true"},
                                   .max_price_micros = max_micros}},
       at);
    tick(at);
    return id;
  }

  void tick(TimeMs at) { beat_and_tick(kNode1, at); }

  // The spot prices in the catalog, oldest first: {effective, per GPU-hour}.
  std::vector<std::pair<TimeMs, int64_t>> history() {
    std::vector<std::pair<TimeMs, int64_t>> out;
    const auto& prices = core.state().prices.prices();
    if (!prices.contains(kSpotKey)) return out;
    for (const auto& [at, price] : prices.at(kSpotKey)) out.emplace_back(at, price.gpu_hour_micros);
    return out;
  }

  int next_ = 0;
};

TEST_F(SpotRulesTest, BadRulesAreRefusedAndChangeNothing) {
  expect_refused<SpotRule>(
      rule(),
      {
          {"unknown model", [](SpotRule& r) { r.model = "Z9000"; }},
          {"empty region", [](SpotRule& r) { r.region = ""; }},
          {"one point", [](SpotRule& r) { r.curve.resize(1); }},
          {"does not start at 0 %", [](SpotRule& r) { r.curve.front().utilisation_pct = 10; }},
          {"does not end at 100 %", [](SpotRule& r) { r.curve.back().utilisation_pct = 90; }},
          {"utilisation falls", [](SpotRule& r) { r.curve[1].utilisation_pct = 0; }},
          {"negative price", [](SpotRule& r) { r.curve[1].gpu_hour_micros = -1; }},
          {"price past the limit",
           [](SpotRule& r) { r.curve[2].gpu_hour_micros = int64_t{1} << 50; }},
          {"interval too short", [](SpotRule& r) { r.interval_ms = 999; }},
          {"interval too long", [](SpotRule& r) { r.interval_ms = int64_t{400} * 86'400'000; }},
      },
      [](SpotRule bad) { return SetSpotRule{.rule = std::move(bad)}; });
  EXPECT_EQ(refused(DeleteSpotRule{.model = "H100-80GB", .region = "eu"}), ErrorCode::kNotFound);
  EXPECT_TRUE(history().empty());
}

TEST_F(SpotRulesTest, TheSpotPriceFollowsUtilisationAtTheRulesInterval) {
  ok(SetSpotRule{.rule = rule()});
  tick(kT0);
  EXPECT_EQ(history(), (std::vector<std::pair<TimeMs, int64_t>>{{kT0, 1 * kUnit}}));

  // Half the GPUs taken: the price moves only when the interval has passed, and only once.
  run_spot(4, 0, kT0 + 1'000);
  EXPECT_EQ(gpu_utilisation_permille(core.state(), "H100-80GB", "eu"), 500);
  tick(kT0 + 30'000);
  EXPECT_EQ(history().size(), 1U);
  tick(kT0 + 60'000);
  tick(kT0 + 120'000);
  EXPECT_EQ(history(),
            (std::vector<std::pair<TimeMs, int64_t>>{{kT0, 1 * kUnit}, {kT0 + 60'000, 2 * kUnit}}));
  EXPECT_EQ(core.state().spot_rules.at("H100-80GB/eu").last_priced_ms, kT0 + 120'000);

  // Deleted, the rule changes the price no more; the history stays.
  ok(DeleteSpotRule{.model = "H100-80GB", .region = "eu"}, kT0 + 130'000);
  run_spot(2, 0, kT0 + 140'000);
  tick(kT0 + 300'000);
  EXPECT_EQ(history().size(), 2U);
  EXPECT_TRUE(core.state().spot_rules.empty());
}

TEST_F(SpotRulesTest, SpotWorkPricedOutByTheCurveIsPreempted) {
  ok(SetSpotRule{.rule = rule()});
  tick(kT0);
  const std::string thrifty = run_spot(2, 1'500'000, kT0 + 1'000);  // At most 1.50 an hour.
  const std::string keen = run_spot(4, 0, kT0 + 2'000);             // Any price.
  // 6 of 8 GPUs: 2.00 + 2.00 x (750 - 500) / 500 = 3.00.
  tick(kT0 + 60'000);
  EXPECT_EQ(history().back(), (std::pair<TimeMs, int64_t>{kT0 + 60'000, 3 * kUnit}));
  tick(kT0 + 61'000);
  EXPECT_EQ(core.state().instance(thrifty)->state, InstanceState::kPreempted);
  EXPECT_EQ(core.state().instance(thrifty)->ended_at_ms, kT0 + 60'000);
  EXPECT_EQ(core.state().instance(keen)->state, InstanceState::kRunning);
}

}  // namespace
}  // namespace allot
