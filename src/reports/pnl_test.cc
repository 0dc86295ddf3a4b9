// A month's P&L against amounts worked out by hand: revenue equal to the invoices, the books'
// costs shared exactly, utilisation, break-even, payback and owning against renting.
#include "reports/pnl.h"

#include <gtest/gtest.h>

#include "common/int128.h"
#include "finance/schedule.h"
#include "reports/invoice_draft.h"
#include "reports/summary.h"
#include "reports/test_state.h"

namespace allot::finance {
namespace {

using billing::testing::at;
using billing::testing::kNode;
using billing::testing::kTenant;
using billing::testing::kUnit;
using billing::testing::kVision;

const std::string kSmall = "nod_0000000000000002";
const TimeMs kNovember = at("2026-11-01T00:00:00Z");
const TimeMs kNow = at("2026-12-05T00:00:00Z");
constexpr int64_t kKwhMj = 3'600'000'000;

State november() {
  State state = billing::testing::base_state();
  Node small{
      .id = kSmall, .name = "n2", .region = "us", .joined_at_ms = at("2026-11-16T00:00:00Z")};
  for (int i = 0; i < 4; ++i) small.gpus.push_back(Gpu{.index = i, .model = "A100-80GB"});
  state.put(small);
  billing::testing::add_price(state, 2 * kUnit, at("2026-01-01T00:00:00Z"));
  // 2 GPUs for 240 hours in November: 960. One GPU from 31 Oct 12:00 to 1 Nov 12:00: 24 of it in
  // November.
  state.put(billing::testing::ran("ins_1", kTenant, kVision, 2, 0, at("2026-11-01T00:00:00Z"),
                                  at("2026-11-11T00:00:00Z")));
  state.put(billing::testing::ran("ins_2", kTenant, kVision, 1, 0, at("2026-10-31T12:00:00Z"),
                                  at("2026-11-01T12:00:00Z")));
  state.put(Asset{.id = "ast_1",
                  .name = "rack one",
                  .node_ids = {kNode},
                  .cost_micros = 240'000 * kUnit,
                  .in_service_ms = at("2026-01-10T00:00:00Z"),
                  .life_months = 24,
                  .financing = {.kind = FinancingKind::kLoan,
                                .principal_micros = 120'000 * kUnit,
                                .annual_rate_ppm = 120'000,
                                .term_months = 12},
                  .power_kw_milli = 10'000});
  state.put(Site{.region = "eu",
                 .pue_milli = 1'500,
                 .colocation_micros_per_kw_month = 150 * kUnit,
                 .power_micros_per_kwh = {{0, 200'000}},
                 .carbon_g_per_kwh = {{0, 400}}});
  // 10 kWh of GPU energy in one November hour, and some in October that is not November's.
  state.put(NodeEnergy{kNode, at("2026-11-05T10:00:00Z"), 10 * kKwhMj});
  state.put(NodeEnergy{kNode, at("2026-10-31T23:00:00Z"), 7 * kKwhMj});
  state.put(FixedCost{.id = "fxc_1",
                      .name = "staff",
                      .monthly_micros = 1'000 * kUnit,
                      .rule = AllocationRule::kPerGpu,
                      .from_month_ms = at("2026-01-01T00:00:00Z")});
  state.put(
      RentalPrice{.provider = "cloud", .gpu_model = "H100-80GB", .micros_per_gpu_hour = 3 * kUnit});
  return state;
}

TEST(MonthPnl, RevenueIsWhatTheMonthsInvoicesCharge) {
  const State state = november();
  auto pnl = month_pnl(state, kNovember, kNow);
  ASSERT_TRUE(pnl) << pnl.error().message;
  ASSERT_EQ(pnl->nodes.size(), 2U);
  const NodeMonth& big = pnl->nodes[0];
  EXPECT_EQ(big.revenue_micros, (960 + 24) * kUnit);
  auto invoice = billing::draft_month(state, kTenant, kNovember, kNow, 0);
  ASSERT_TRUE(invoice);
  int64_t invoiced = 0;
  for (const InvoiceLine& line : invoice->lines) invoiced += line.amount_micros;
  EXPECT_EQ(big.revenue_micros + pnl->nodes[1].revenue_micros, invoiced);
}

TEST(MonthPnl, CostsComeFromTheBooksToTheMicroUnit) {
  const State state = november();
  const NodeMonth big = month_pnl(state, kNovember, kNow)->nodes[0];
  const NodeMonth small = month_pnl(state, kNovember, kNow)->nodes[1];
  EXPECT_EQ(big.depreciation_micros, 10'000 * kUnit);  // 240,000 over 24 months.
  // November is the loan's 11th month; its row of the schedule, all on the one node.
  const auto loan = financing_schedule(state.books.assets.at("ast_1").financing,
                                       state.books.assets.at("ast_1").in_service_ms);
  EXPECT_EQ(big.interest_micros, loan[10].interest_micros);
  EXPECT_EQ(big.principal_micros, loan[10].principal_micros);
  EXPECT_EQ(big.colocation_micros, 1'500 * kUnit);  // 10 kW at 150 a kW.
  // 10 kWh x PUE 1.5 x 0.20 a kWh = 3.00; 15 kWh x 400 g = 6 kg.
  EXPECT_EQ(big.energy_mj, 10 * kKwhMj);
  EXPECT_EQ(big.power_micros, 3 * kUnit);
  EXPECT_EQ(big.carbon_ug, 6'000'000'000);
  // 1,000 over GPU-seconds in service: 8 GPUs for 30 days and 4 from the 16th, 15 days.
  EXPECT_EQ(big.other_micros, 800 * kUnit);
  EXPECT_EQ(small.other_micros, 200 * kUnit);
  EXPECT_EQ(small.depreciation_micros, 0);  // In no asset.
  EXPECT_EQ(big.costs_micros(),
            10'000 * kUnit + loan[10].interest_micros + 1'500 * kUnit + 3 * kUnit + 800 * kUnit);
}

TEST(MonthPnl, ANodeBearsFixedCostsOnlyForItsTimeInTheFleet) {
  State state = november();
  // A third node of 4 GPUs, deleted 32 s after it joined: 4 x 32 GPU-seconds against the others'
  // 8 x 30 days and 4 x 15 days. 1,000,000,000 x 128 / 25,920,128 = 4,938.247..., floored; the
  // micro-units left by flooring go to the largest remainders (here its .247 loses to the others').
  Node brief{.id = "nod_0000000000000003",
             .name = "n3",
             .region = "us",
             .joined_at_ms = at("2026-11-20T00:00:00Z"),
             .deleted_at_ms = at("2026-11-20T00:00:32Z")};
  for (int i = 0; i < 4; ++i) brief.gpus.push_back(Gpu{.index = i, .model = "A100-80GB"});
  state.put(brief);
  auto pnl = month_pnl(state, kNovember, kNow);
  ASSERT_TRUE(pnl);
  ASSERT_EQ(pnl->nodes.size(), 3U);
  EXPECT_EQ(pnl->nodes[2].other_micros, 4'938);
  EXPECT_EQ(pnl->nodes[2].available_gpu_ms, 4 * 32'000);
  EXPECT_EQ(pnl->nodes[0].other_micros + pnl->nodes[1].other_micros + pnl->nodes[2].other_micros,
            1'000 * kUnit);
  // Deleted before December: no part of December's costs.
  auto december = month_pnl(state, at("2026-12-01T00:00:00Z"), kNow);
  ASSERT_TRUE(december);
  for (const NodeMonth& row : december->nodes) EXPECT_NE(row.node_id, brief.id);
}

TEST(MonthPnl, AMonthStillRunningBearsThePartOfEachCostThatHasPassedAndProjectsTheWhole) {
  const State state = november();
  const TimeMs half = at("2026-11-16T00:00:00Z");  // 15 of November's 30 days.
  auto whole = month_pnl(state, kNovember, kNow);
  auto so_far = month_pnl(state, kNovember, half);
  ASSERT_TRUE(whole && so_far);
  EXPECT_FALSE(whole->month_to_date());
  ASSERT_TRUE(so_far->month_to_date());
  EXPECT_EQ(so_far->through_ms, half);
  EXPECT_EQ(whole->through_ms, at("2026-12-01T00:00:00Z"));
  // The rack was in service all month and its node in the fleet: half of each accruing cost.
  const NodeMonth& big = so_far->nodes[0];
  const NodeMonth& big_month = whole->nodes[0];
  EXPECT_EQ(big.depreciation_micros, big_month.depreciation_micros / 2);
  EXPECT_EQ(big.interest_micros, big_month.interest_micros / 2);
  EXPECT_EQ(big.principal_micros, big_month.principal_micros / 2);
  EXPECT_EQ(big.colocation_micros, 750 * kUnit);
  EXPECT_EQ(big.power_micros, big_month.power_micros);  // Metered: all of it on the 5th.
  // Half the staff's 1,000, all on the rack's node: the small one joins only now.
  EXPECT_EQ(big.other_micros, 500 * kUnit);
  EXPECT_EQ(so_far->nodes[1].other_micros, 0);
  // The whole month: every accruing cost in full, and revenue and power at their rate so far.
  int64_t accruing = 0;
  int64_t power = 0;
  for (const NodeMonth& row : whole->nodes) {
    accruing += row.costs_micros() - row.power_micros;
    power += row.power_micros;
  }
  const int64_t net = *so_far->revenue_micros() - so_far->credits_micros;
  EXPECT_EQ(so_far->projection->costs_micros, accruing + 2 * power);
  EXPECT_EQ(so_far->projection->net_revenue_micros, 2 * net);
  EXPECT_EQ(so_far->projection->margin_micros, 2 * net - accruing - 2 * power);
}

TEST(MonthPnl, UtilisationCountsGpuTimeInServiceAndHeld) {
  const State state = november();
  auto pnl = month_pnl(state, kNovember, kNow);
  constexpr int64_t kHourMs = 3'600'000;
  EXPECT_EQ(pnl->nodes[0].available_gpu_ms, int64_t{8} * 720 * kHourMs);
  EXPECT_EQ(pnl->nodes[0].allocated_gpu_ms, ((int64_t{2} * 240) + 12) * kHourMs);
  EXPECT_EQ(pnl->nodes[1].available_gpu_ms, int64_t{4} * 360 * kHourMs);  // Joined on the 16th.
  const auto groups = group(state, *pnl, GroupBy::kNode, {}, kNow);
  const Group& big = groups[0];
  EXPECT_EQ(big.key, "n1");
  EXPECT_EQ(big.utilisation_ppm, 85'416);  // 492 of 5,760 GPU-hours.
  EXPECT_EQ(big.price_micros_per_gpu_hour, 2 * kUnit);
  EXPECT_EQ(big.idle_gpu_ms, (5'760 - 492) * kHourMs);
  const int64_t costs = big.sums.costs_micros();
  EXPECT_EQ(big.idle_cost_micros, static_cast<int64_t>(Int128{costs} * 5'268 / 5'760));
  // Break-even: the costs over what every GPU-hour sold at 2.00 would bring.
  EXPECT_EQ(*big.break_even_ppm,
            static_cast<int64_t>(Int128{costs} * 1'000'000 / (Int128{2} * kUnit * 5'760)));
  const auto total = group(state, *pnl, GroupBy::kTotal, {}, kNow);
  ASSERT_EQ(total.size(), 1U);
  EXPECT_EQ(total[0].nodes, 2);
  EXPECT_EQ(total[0].sums.revenue_micros, 984 * kUnit);
  EXPECT_EQ(total[0].sums.other_micros, 1'000 * kUnit);
}

TEST(MonthPnl, WhatIfMovesRevenueWithPriceAndPowerWithUtilisation) {
  const State state = november();
  auto pnl = month_pnl(state, kNovember, kNow);
  auto dearer = group(state, *pnl, GroupBy::kNode, {.price_factor_ppm = 1'100'000}, kNow);
  EXPECT_EQ(*dearer[0].what_if_revenue_micros, 1'082'400'000);  // 984 x 1.1
  auto busier = group(state, *pnl, GroupBy::kNode, {.utilisation_ppm = 500'000}, kNow);
  // Half of 5,760 GPU-hours at 2.00: 5,760; power 3.00 grows with utilisation 85,416 -> 500,000.
  EXPECT_EQ(*busier[0].what_if_revenue_micros, 5'760 * kUnit);
  const int64_t power = 3 * kUnit * 500'000 / 85'416;
  EXPECT_EQ(*busier[0].what_if_margin_micros,
            5'760 * kUnit - (busier[0].sums.costs_micros() - 3 * kUnit + power));
}

TEST(MonthPnl, BuyOrRentPricesTheUsedHoursAtListPrices) {
  const State state = november();
  auto pnl = month_pnl(state, kNovember, kNow);
  const auto models = buy_or_rent(state, *pnl);
  ASSERT_EQ(models.size(), 2U);
  const BuyOrRent& h100 = models[1];
  EXPECT_EQ(h100.gpu_model, "H100-80GB");
  ASSERT_EQ(h100.quotes.size(), 1U);
  EXPECT_EQ(h100.quotes[0].used_micros, int64_t{492} * 3 * kUnit);
  EXPECT_EQ(h100.quotes[0].capacity_micros, int64_t{5'760} * 3 * kUnit);
  EXPECT_TRUE(models[0].quotes.empty());  // No list price for the A100.
}

TEST(MonthPnl, PaybackIsWhenTheCashMarginCoversTheCost) {
  State state = november();
  // A cheap asset that pays back: cost 500 in service from November; November's cash margin is
  // 984 - 3 - 1,500 - 800 - interest < 0 with the loan, so a cash asset without colocation.
  state.books.assets.clear();
  state.put(Asset{.id = "ast_2",
                  .name = "cheap",
                  .node_ids = {kNode},
                  .cost_micros = 100 * kUnit,
                  .in_service_ms = kNovember,
                  .life_months = 12});
  auto paid = payback(state, kNovember, kNow);
  ASSERT_TRUE(paid);
  ASSERT_EQ(paid->size(), 1U);
  // 984 - 3 - 800 = 181 >= 100 in its first month.
  EXPECT_EQ((*paid)[0].recovered_micros, 181 * kUnit);
  EXPECT_EQ((*paid)[0].payback_month_ms, kNovember);
  EXPECT_FALSE((*paid)[0].projected);
}

TEST(MonthPnl, AMomentThatIsNotAMonthsStartIsRefused) {
  EXPECT_FALSE(month_pnl(november(), kNovember + 1, kNow));
}

}  // namespace
}  // namespace allot::finance
