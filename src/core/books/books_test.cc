// The operator's books in the core: refused input changes nothing, and energy and carbon come
// from the GPUs' counters exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/books/books.h"
#include "core/test_core.h"

namespace allot {
namespace {

const std::string kAsset = "ast_0000000000000001";

class BooksTest : public CoreTest {
 protected:
  void SetUp() override {
    ok(CreateTenant{kTenantA, "alpha"});
    ok(CreateProject{kProjectA, kTenantA, "one"});
    ok(CreateJoinToken{"jtk_0000000000000001", "all", kToken, 0});
    ok(eight_gpu_join(kNode1, "h", "eu", "H100-80GB", kToken));
    ok(NodeHeartbeat{.node_id = kNode1});
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
  }

  static finance::Asset server() {
    return finance::Asset{.id = kAsset,
                          .name = "rack one",
                          .node_ids = {kNode1},
                          .cost_micros = 300'000 * kUnit,
                          .in_service_ms = kT0,
                          .life_months = 60,
                          .salvage_micros = 20'000 * kUnit};
  }

  // A heartbeat of the node: every GPU's energy counter and the workloads it runs.
  Rows beat(const std::vector<int64_t>& energy_mj, const std::vector<std::string>& running,
            TimeMs at) {
    NodeHeartbeat beat{.node_id = kNode1};
    for (size_t i = 0; i < energy_mj.size(); ++i) {
      beat.gpus.push_back(
          GpuHeartbeat{.index = static_cast<int>(i), .telemetry = {.energy_mj = energy_mj[i]}});
    }
    for (const std::string& id : running) {
      beat.workloads.push_back({.instance_id = id, .state = WorkloadReportState::kRunning});
    }
    return ok(beat, at);
  }

  std::string launch(InstanceSpec spec) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    spec.command = {"true"};
    ok(CreateInstance{.id = id,
                      .tenant_id = kTenantA,
                      .project_id = kProjectA,
                      .user_id = "usr_1",
                      .spec = spec});
    return id;
  }

  EnergyUse energy(const std::string& id) {
    return core.state().instance(id)->energy_between(month_start(kT0), next_month_start(kT0));
  }

  BooksTest() : CoreTest(CoreOptions{.heartbeat_timeout_ms = 3'600'000'000}) {}
  int next_ = 0;
};

TEST_F(BooksTest, BadInputIsRefusedWithAClearCodeAndChangesNothing) {
  finance::Asset a = server();
  a.cost_micros = -1;
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kInvalidArgument);  // a negative price
  a = server();
  a.life_months = -12;
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kInvalidArgument);  // a negative life
  a = server();
  a.financing = {.kind = finance::FinancingKind::kLoan,
                 .principal_micros = 100'000 * kUnit,
                 .annual_rate_ppm = 60'000,
                 .term_months = 0};
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kInvalidArgument);  // a loan with zero term
  a = server();
  a.salvage_micros = a.cost_micros + 1;
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kInvalidArgument);  // salvage above cost
  a = server();
  a.node_ids = {"nod_00000000000000ff"};
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kNotFound);  // an unknown node
  EXPECT_EQ(refused(SetSite{.region = "eu", .pue_milli = 999}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(AddSiteRate{.region = "eu", .point = {.value = -5}}),
            ErrorCode::kInvalidArgument);  // a negative energy price
  EXPECT_EQ(refused(AddSiteRate{.region = "eu", .point = {.from_ms = kT0 - 1, .value = 5}}),
            ErrorCode::kInvalidArgument);  // dated in the past
  a = server();
  a.financing.term_months = 12;  // Cash takes no terms.
  EXPECT_EQ(refused(CreateAsset{a}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(AddFixedCost{
                FixedCost{.id = "fxc_0000000000000001", .name = "staff", .monthly_micros = -1}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetRentalPrice{RentalPrice{
                .provider = "cloud", .gpu_model = "H100-80GB", .micros_per_gpu_hour = -1}}),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(core.state().books.assets.empty());
}

TEST_F(BooksTest, ANodeBelongsToOneAssetAndARetiredAssetTakesNoChanges) {
  ok(CreateAsset{server()});
  finance::Asset again = server();
  again.id = "ast_0000000000000002";
  EXPECT_EQ(refused(CreateAsset{again}), ErrorCode::kConflict);
  const TimeMs next_month = next_month_start(kT0);
  EXPECT_EQ(
      refused(ChangeAssetEstimate{kAsset, {.from_month_ms = month_start(kT0), .life_months = 48}}),
      ErrorCode::kInvalidArgument);  // Not after its first month.
  ok(ChangeAssetEstimate{kAsset, {.from_month_ms = next_month, .life_months = 48}});
  EXPECT_EQ(core.state().books.assets.at(kAsset).changes.size(), 1U);
  ok(RetireAsset{.asset_id = kAsset, .retired_ms = next_month + 5, .proceeds_micros = kUnit});
  EXPECT_EQ(refused(RetireAsset{.asset_id = kAsset}), ErrorCode::kConflict);
  EXPECT_EQ(refused(ChangeAssetEstimate{
                kAsset, {.from_month_ms = next_month_start(next_month), .life_months = 36}}),
            ErrorCode::kConflict);
}

TEST_F(BooksTest, AnInstancesEnergyIsItsGpusCounterDeltasWhileItRan) {
  const std::string whole = launch({.gpus = 2});
  const TimeMs t = kT0 + 1'000;
  // GPU 0 and 1 are the instance's (first fit); the others idle.
  beat({1'000, 2'000, 50, 50, 50, 50, 50, 50}, {whole}, t);  // Reported running now.
  ASSERT_EQ(core.state().instance(whole)->state, InstanceState::kRunning);
  EXPECT_EQ(energy(whole).energy_mj, 0);  // Nothing before it ran.
  beat({4'000, 2'500, 60, 60, 60, 60, 60, 60}, {whole}, t + 2'000);
  EXPECT_EQ(energy(whole).energy_mj, 3'000 + 500);
  beat({9'000, 2'600, 70, 70, 70, 70, 70, 70}, {whole}, t + 4'000);
  EXPECT_EQ(energy(whole).energy_mj, 3'500 + 5'000 + 100);
  // It exits: the report that says so still carries the energy it used up to then.
  NodeHeartbeat last{.node_id = kNode1};
  for (int i = 0; i < 8; ++i) {
    last.gpus.push_back({.index = i, .telemetry = {.energy_mj = i < 2 ? 10'000 : 80}});
  }
  last.workloads.push_back({.instance_id = whole, .state = WorkloadReportState::kExited});
  ok(last, t + 6'000);
  EXPECT_EQ(energy(whole).energy_mj, 8'600 + 1'000 + 7'400);
  // After it ended, its GPUs' energy is the node's alone.
  beat({12'000, 12'000, 90, 90, 90, 90, 90, 90}, {}, t + 8'000);
  EXPECT_EQ(energy(whole).energy_mj, 17'000);
  int64_t node_mj = 0;
  for (const auto& [hour, mj] : core.state().books.energy.at(kNode1)) node_mj += mj;
  EXPECT_EQ(node_mj, 12'000 + 12'000 + 6 * 90);  // Every counter from zero to its last reading.
}

TEST_F(BooksTest, ACounterThatRestartsFromZeroNeitherLosesNorDoubleCounts) {
  const std::string id = launch({.gpus = 1});
  const TimeMs t = kT0 + 1'000;
  beat({5'000}, {id}, t);
  beat({8'000}, {id}, t + 2'000);  // +3,000
  // The agent restarted: its counter starts again from zero and reads 1,200 since then.
  beat({1'200}, {id}, t + 4'000);  // +1,200, not -6,800 and not +1,200 again later
  beat({2'000}, {id}, t + 6'000);  // +800
  EXPECT_EQ(energy(id).energy_mj, 3'000 + 1'200 + 800);
  beat({2'000}, {id}, t + 8'000);  // The same reading: nothing.
  EXPECT_EQ(energy(id).energy_mj, 5'000);
}

TEST_F(BooksTest, ASharedGpuSplitsItsEnergyByMilli) {
  const std::string half = launch({.gpu_milli = 500});
  const std::string quarter = launch({.gpu_milli = 250});
  const Instance& a = *core.state().instance(half);
  const Instance& b = *core.state().instance(quarter);
  ASSERT_EQ(a.gpu_indices, b.gpu_indices);  // Both on one GPU.
  const int gpu = a.gpu_indices.front();
  std::vector<int64_t> counters(8, 0);
  const TimeMs t = kT0 + 1'000;
  beat(counters, {half, quarter}, t);
  counters[static_cast<size_t>(gpu)] = 3'001;
  beat(counters, {half, quarter}, t + 2'000);
  // 3,001 mJ over 500 : 250 milli: 2,000.67 and 1,000.33; the odd mJ goes to the larger remainder.
  EXPECT_EQ(energy(half).energy_mj, 2'001);
  EXPECT_EQ(energy(quarter).energy_mj, 1'000);
}

TEST_F(BooksTest, CarbonIsKwhTimesPueTimesTheGridIntensityThen) {
  ok(SetSite{.region = "eu", .pue_milli = 1'500});
  ok(AddSiteRate{.region = "eu", .rate = SiteRate::kCarbonIntensity, .point = {.value = 400}});
  ok(AddSiteRate{.region = "eu",
                 .rate = SiteRate::kCarbonIntensity,
                 .point = {.from_ms = kT0 + 10'000, .value = 100}});
  const std::string id = launch({.gpus = 1});
  const TimeMs t = kT0 + 1'000;
  constexpr int64_t kKwhMj = 3'600'000'000;
  beat({0}, {id}, t);
  beat({kKwhMj}, {id}, t + 2'000);  // 1 kWh at 400 g/kWh and PUE 1.5: 600 g.
  EXPECT_EQ(energy(id).carbon_ug, 600'000'000);
  beat({2 * kKwhMj}, {id}, kT0 + 20'000);  // 1 kWh more at 100 g/kWh: 150 g.
  EXPECT_EQ(energy(id).carbon_ug, 750'000'000);
  EXPECT_EQ(energy(id).energy_mj, 2 * kKwhMj);
}

}  // namespace
}  // namespace allot
