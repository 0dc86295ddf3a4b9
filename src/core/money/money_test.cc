#include "core/money/money.h"

#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/money/metering.h"
#include "core/test_core.h"

namespace allot {
namespace {

// 3,600 units per GPU-hour: one unit per GPU-second.
constexpr int64_t kUnitPerSecond = 3'600 * kUnit;

class MoneyTest : public CoreTest {
 protected:
  void SetUp() override {
    for (const Command& c : one_node_cloud(kTenant1, kProject1, kNode1, kToken)) ok(c);
    price(PriceClass::kOnDemand, kUnitPerSecond);
  }

  void price(PriceClass price_class, int64_t per_gpu_hour, TimeMs from = kT0) {
    ok(SetPrice{{.key = {.model = "H100-80GB", .region = "eu", .price_class = price_class},
                 .effective_ms = from,
                 .gpu_hour_micros = per_gpu_hour}});
  }

  void beat(std::vector<WorkloadReport> workloads, TimeMs at = kT0) {
    ok(NodeHeartbeat{.node_id = kNode1, .workloads = std::move(workloads)}, at);
  }

  // Launches and starts running at `at` + 1 s.
  std::string run(InstanceSpec spec, TimeMs at = kT0) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    spec.command = {"true"};
    ok(CreateInstance{id, kTenant1, kProject1, "usr_1", spec}, at);
    beat({{id, WorkloadReportState::kRunning}}, at + 1'000);
    return id;
  }

  // Ticks every 10 s up to `until`, with the node's heartbeats saying its work runs (placed work
  // starts, work told to stop is gone).
  void advance(TimeMs from, TimeMs until) {
    for (TimeMs at = from; at <= until; at += 10'000) beat_and_tick(kNode1, at);
  }

  Balance balance(TimeMs at) { return *balance_of(core.state(), kTenant1, at); }
  const Instance& instance(const std::string& id) { return *core.state().instance(id); }

  void expect_ledger_sums_to_zero() {
    const auto sums = core.state().ledger.sums();
    EXPECT_TRUE(sums.posted == 0 && sums.pending == 0);
  }

  MoneyTest()
      : CoreTest(CoreOptions{.heartbeat_timeout_ms = 30'000, .rating_interval_ms = 10'000}) {}
  int next_ = 0;
};

TEST_F(MoneyTest, ATopUpHappensOnceAndItsIdCannotBeReusedForAnother) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100 * kUnit});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100 * kUnit});
  EXPECT_EQ(balance(kT0).cash_micros, 100 * kUnit);
  EXPECT_EQ(refused(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 50 * kUnit}),
            ErrorCode::kConflict);
  for (int64_t bad : {int64_t{0}, int64_t{-5}, int64_t{1'000'000'000'000'000'001}}) {
    EXPECT_EQ(refused(Topup{.id = "pay-2", .tenant_id = kTenant1, .amount_micros = bad}),
              ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(refused(Topup{.id = "pay-3", .tenant_id = "ten_00000000000000ff", .amount_micros = 1}),
            ErrorCode::kNotFound);
  EXPECT_EQ(refused(Topup{.id = "bad id!", .tenant_id = kTenant1, .amount_micros = 1}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(Topup{.id = "pay-4",
                          .tenant_id = kTenant1,
                          .amount_micros = 1,
                          .credit = true,
                          .expires_at_ms = kT0 - 1}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(balance(kT0).cash_micros, 100 * kUnit);  // Nothing refused moved money.
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, PrepaidWorkStopsAtTheSecondItsMoneyRunsOutAndNoNewWorkStarts) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100 * kUnit});
  const std::string id = run({.gpus = 1});
  // The hold takes the runway's worth, or what there is.
  EXPECT_EQ(balance(kT0 + 1'000).held_micros, 100 * kUnit);
  advance(kT0 + 10'000, kT0 + 200'000);
  EXPECT_EQ(instance(id).state, InstanceState::kStopped) << instance(id).reason;
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 101'000);  // 100 s from its start at 1 s.
  EXPECT_EQ(instance(id).billed_micros, 100 * kUnit);
  const Balance after = balance(kT0 + 200'000);
  EXPECT_EQ(after.cash_micros, 0);
  EXPECT_EQ(after.held_micros, 0);
  EXPECT_EQ(refused(CreateInstance{"ins_00000000000000ff", kTenant1, kProject1, "usr_1",
                                   InstanceSpec{.gpus = 1, .command = {"true"}}},
                    kT0 + 200'000),
            ErrorCode::kInsufficientFunds);
  ok(Topup{.id = "pay-2", .tenant_id = kTenant1, .amount_micros = 5 * kUnit}, kT0 + 200'000);
  EXPECT_EQ(balance(kT0 + 200'000).cash_micros, 5 * kUnit);
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, UsageAccruedWithinAHoldIsCountedOnceInWhatIsAvailable) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 10'000 * kUnit});
  run({.gpus = 1});  // Holds the hour's runway: 3,600 units.
  // Four seconds run and are not posted yet: they are spent out of the hold, not beside it.
  const Balance running = balance(kT0 + 5'000);
  EXPECT_EQ(running.held_micros, 3'600 * kUnit);
  EXPECT_EQ(running.unposted_micros, 4 * kUnit);
  EXPECT_EQ(running.available_micros, 6'400 * kUnit);
  // Past the hold, the usage itself is what is taken.
  ok(Topup{.id = "pay-2", .tenant_id = kTenant1, .amount_micros = kUnit}, kT0 + 5'000);
  EXPECT_EQ(balance(kT0 + 5'000).available_micros, 6'401 * kUnit);
}

TEST_F(MoneyTest, APrepaidTenantWhoseHoldCoversItsWorkIsNeverShownBelowZero) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100 * kUnit});
  run({.gpus = 1});  // The hold takes all 100 units: less than the runway's worth.
  for (TimeMs at : {kT0 + 1'000, kT0 + 5'000, kT0 + 9'000}) {
    const Balance b = balance(at);
    EXPECT_EQ(b.held_micros, 100 * kUnit);
    EXPECT_EQ(b.available_micros, 0)
        << "at +" << (at - kT0) << " ms, unposted " << b.unposted_micros;
  }
}

TEST_F(MoneyTest, PromotionalCreditsPayFirstAndWhatIsLeftLapses) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "cash", .tenant_id = kTenant1, .amount_micros = 1'000 * kUnit});
  ok(Topup{.id = "promo",
           .tenant_id = kTenant1,
           .amount_micros = 50 * kUnit,
           .credit = true,
           .expires_at_ms = kT0 + 25'000});
  EXPECT_EQ(balance(kT0).credits_micros, 50 * kUnit);
  const std::string id = run({.gpus = 1});
  advance(kT0 + 10'000, kT0 + 60'000);
  // 19 s were posted from the credit at 20 s; the other 31 lapsed at 25 s.
  const Balance b = balance(kT0 + 60'000);
  EXPECT_EQ(b.credits_micros, 0);
  EXPECT_EQ(instance(id).billed_micros, 59 * kUnit);
  EXPECT_EQ(b.cash_micros, (1'000 - 40) * kUnit);
  const ledger::Account* promotions = core.state().ledger.account(std::string(kPromotionsAccount));
  ASSERT_NE(promotions, nullptr);
  EXPECT_EQ(promotions->credit_balance(), -19 * kUnit);  // Given 50, 31 came back.
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, PostpaidWorkStopsAtTheCreditLimit) {
  ok(SetBilling{kTenant1, BillingMode::kPostpaid, 30 * kUnit});
  const std::string id = run({.gpus = 2});
  advance(kT0 + 10'000, kT0 + 60'000);
  EXPECT_EQ(instance(id).state, InstanceState::kStopped);
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 16'000);  // 2 GPUs: 15 s cost 30.
  EXPECT_EQ(balance(kT0 + 60'000).cash_micros, -30 * kUnit);
  EXPECT_EQ(refused(SetBilling{kTenant1, BillingMode::kPrepaid}, kT0 + 60'000),
            ErrorCode::kConflict);  // It owes: it pays before it turns prepaid.
  EXPECT_EQ(refused(SetBilling{kTenant1, BillingMode::kPrepaid, 5}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetBilling{kTenant1, BillingMode::kPostpaid, -1}), ErrorCode::kInvalidArgument);
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, PostpaidWithoutALimitRunsOnAndOwesExactlyItsUsage) {
  const std::string id = run({.gpu_milli = 250});
  advance(kT0 + 10'000, kT0 + 3'601'000);
  ok(StopInstance{id}, kT0 + 3'601'500);
  beat({{id, WorkloadReportState::kExited, 0}}, kT0 + 3'602'000);
  ok(Tick{}, kT0 + 3'603'000);
  EXPECT_TRUE(instance(id).settled);
  // A quarter GPU for 3,601 s at one unit per GPU-second.
  EXPECT_EQ(instance(id).billed_micros, 3'601 * kUnit / 4);
  EXPECT_EQ(balance(kT0 + 3'603'000).cash_micros, -(3'601 * kUnit / 4));
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, SpotWorkIsPreemptedAtTheSecondItsPricePassesItsMaximum) {
  price(PriceClass::kSpot, 2'000 * kUnit);
  price(PriceClass::kSpot, 5'000 * kUnit, kT0 + 100'000);
  const std::string id =
      run({.gpus = 1, .price_class = PriceClass::kSpot, .max_price_micros = 4'000 * kUnit});
  advance(kT0 + 10'000, kT0 + 110'000);
  EXPECT_EQ(instance(id).state, InstanceState::kPreempted);
  EXPECT_EQ(instance(id).ended_at_ms, kT0 + 100'000);
  // 99 s at 2,000 per hour, nothing at the new price.
  EXPECT_EQ(instance(id).billed_micros, 2'000 * kUnit * 99 / 3'600);
  // While the price is over its maximum, spot work with that maximum does not start.
  const std::string later = fmt::format("ins_{:016x}", ++next_);
  ok(CreateInstance{later, kTenant1, kProject1, "usr_1",
                    InstanceSpec{.gpus = 1,
                                 .price_class = PriceClass::kSpot,
                                 .command = {"true"},
                                 .max_price_micros = 4'000 * kUnit}},
     kT0 + 120'000);
  EXPECT_EQ(instance(later).state, InstanceState::kQueued);
  EXPECT_EQ(
      refused(CreateInstance{"ins_00000000000000fe", kTenant1, kProject1, "usr_1",
                             InstanceSpec{.gpus = 1, .command = {"true"}, .max_price_micros = -1}}),
      ErrorCode::kInvalidArgument);  // A maximum is 0 (none) or above.
}

TEST_F(MoneyTest, OnDemandWorkWithAMaximumIsPlacedWithinItAndNotPreemptedWhenThePriceRises) {
  const int64_t max = 2 * kUnitPerSecond;
  const std::string id = run({.gpus = 1, .max_price_micros = max});
  price(PriceClass::kOnDemand, 3 * kUnitPerSecond, kT0 + 100'000);
  advance(kT0 + 10'000, kT0 + 110'000);
  EXPECT_EQ(instance(id).state, InstanceState::kRunning);  // Its maximum limits placement only.
  // Now the price is over its maximum: new work with that maximum waits and says why.
  const std::string later = "ins_00000000000000fd";
  ok(CreateInstance{later, kTenant1, kProject1, "usr_1",
                    InstanceSpec{.gpus = 1, .command = {"true"}, .max_price_micros = max}},
     kT0 + 120'000);
  EXPECT_EQ(instance(later).state, InstanceState::kQueued);
  EXPECT_NE(instance(later).reason.find("over max price"), std::string::npos)
      << instance(later).reason;
}

TEST_F(MoneyTest, WorkOfAClassWithNoPriceIsRefusedAndRunsOnlyOnceAPriceIsInForce) {
  // Only an on-demand price exists: spot work would run at no price at all, with or without a
  // maximum (which no price can be shown to meet). Refused, and nothing changes.
  for (int64_t max : {int64_t{0}, 4'000 * kUnit}) {
    const auto before = core.state().instances;
    const ErrorCode code =
        refused(CreateInstance{"ins_00000000000000fe", kTenant1, kProject1, "usr_1",
                               InstanceSpec{.gpus = 1,
                                            .price_class = PriceClass::kSpot,
                                            .command = {"true"},
                                            .max_price_micros = max}});
    EXPECT_EQ(code, ErrorCode::kNoPrice);
    EXPECT_EQ(core.state().instances, before);
  }
  // A model with no price anywhere, and a region with none, are refused the same way.
  EXPECT_EQ(
      refused(CreateInstance{"ins_00000000000000fe", kTenant1, kProject1, "usr_1",
                             InstanceSpec{.gpus = 1, .gpu_models = {"A100"}, .command = {"true"}}}),
      ErrorCode::kNoPrice);
  EXPECT_EQ(
      refused(CreateInstance{"ins_00000000000000fe", kTenant1, kProject1, "usr_1",
                             InstanceSpec{.gpus = 1, .command = {"true"}, .regions = {"us"}}}),
      ErrorCode::kNoPrice);
  // A spot price set to begin later: the work is taken and waits for it, saying why.
  price(PriceClass::kSpot, 2'000 * kUnit, kT0 + 10'000);
  const std::string spot =
      run({.gpus = 1, .price_class = PriceClass::kSpot, .max_price_micros = 4'000 * kUnit});
  EXPECT_EQ(instance(spot).state, InstanceState::kQueued);
  EXPECT_NE(instance(spot).reason.find("1 of 1 ready nodes have no spot price for their GPUs"),
            std::string::npos)
      << instance(spot).reason;
  advance(kT0 + 10'000, kT0 + 20'000);
  EXPECT_EQ(instance(spot).state, InstanceState::kRunning) << instance(spot).reason;
}

TEST_F(MoneyTest, SpotFallsBackToTheOnDemandPriceOnlyWhenTheOperatorSaysSo) {
  core = Core(CoreOptions{
      .heartbeat_timeout_ms = 30'000, .rating_interval_ms = 10'000, .spot_falls_back = true});
  SetUp();  // The on-demand price is one unit per GPU-second; no spot price yet.
  // A maximum below the on-demand price it would be charged: it waits, saying so.
  const std::string capped =
      run({.gpus = 1, .price_class = PriceClass::kSpot, .max_price_micros = kUnitPerSecond / 2});
  EXPECT_EQ(instance(capped).state, InstanceState::kQueued);
  EXPECT_NE(instance(capped).reason.find("over max price"), std::string::npos)
      << instance(capped).reason;
  const std::string spot = run({.gpus = 1, .price_class = PriceClass::kSpot});
  EXPECT_EQ(instance(spot).state, InstanceState::kRunning) << instance(spot).reason;
  // From 100 s on a spot price of a quarter unit per second is in force, and charged instead.
  price(PriceClass::kSpot, kUnitPerSecond / 4, kT0 + 101'000);
  advance(kT0 + 10'000, kT0 + 200'000);
  ok(StopInstance{spot}, kT0 + 201'000);
  beat({{spot, WorkloadReportState::kExited, 0}}, kT0 + 201'000);
  ok(Tick{}, kT0 + 202'000);
  EXPECT_TRUE(instance(spot).settled);
  // Running from 1 s: 100 s at the on-demand price, then 100 s at the spot price.
  EXPECT_EQ(instance(spot).billed_micros, 100 * kUnit + 100 * kUnit / 4);
  expect_ledger_sums_to_zero();
}

TEST_F(MoneyTest, AGangOfSpotWorkStartsOnlyWhereTheSpotPriceIsWithinItsMaximum) {
  ok(eight_gpu_join("nod_0000000000000002", "b", "eu", "H100-80GB", kToken));
  ok(NodeHeartbeat{.node_id = "nod_0000000000000002"});
  price(PriceClass::kSpot, 5'000 * kUnit);
  price(PriceClass::kSpot, 3'000 * kUnit, kT0 + 60'000);
  const std::string id = fmt::format("ins_{:016x}", ++next_);
  ok(CreateInstance{.id = id,
                    .tenant_id = kTenant1,
                    .project_id = kProject1,
                    .user_id = "usr_1",
                    .spec = {.gpus = 8,
                             .price_class = PriceClass::kSpot,
                             .command = {"true"},
                             .nodes = 2,
                             .max_price_micros = 4'000 * kUnit},
                    .member_ids = {"ins_00000000000000aa"}});
  EXPECT_EQ(instance(id).state, InstanceState::kQueued);
  beat({}, kT0 + 60'000);
  ok(NodeHeartbeat{.node_id = "nod_0000000000000002"}, kT0 + 60'000);
  ok(Tick{}, kT0 + 60'000);  // The price falls within its maximum: both members are placed.
  EXPECT_EQ(instance(id).state, InstanceState::kScheduled);
  EXPECT_EQ(instance("ins_00000000000000aa").state, InstanceState::kScheduled);
}

TEST_F(MoneyTest, TheJournalReplaysIntoTheSameBalances) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 70 * kUnit});
  run({.gpus = 1});
  advance(kT0 + 10'000, kT0 + 100'000);
  ledger::Ledger replayed;
  const ledger::Ledger& ledger = core.state().ledger;
  for (const auto& [id, account] : ledger.accounts()) {
    ledger::Account empty = account;
    empty.debits_pending = empty.debits_posted = empty.credits_pending = empty.credits_posted = 0;
    ASSERT_TRUE(replayed.create_account(empty, account.created_at_ms));
  }
  std::vector<ledger::Transfer> chain;
  for (const ledger::Transfer& t : ledger.requests()) {
    chain.push_back(t);
    if (t.linked) continue;
    for (const Status& s : replayed.create_transfers(chain, t.created_at_ms)) ASSERT_TRUE(s);
    chain.clear();
  }
  EXPECT_EQ(replayed.accounts(), ledger.accounts());
  expect_ledger_sums_to_zero();
}

// Spot work placed but not yet started, preempted twice and requeued each time: it never ran, so
// each preemption gives its hold back; none is left pending on the tenant's balance (the chaos
// simulation found the second hold kept by nobody).
TEST_F(MoneyTest, WorkPreemptedBeforeItStartsGivesItsHoldBackEachTime) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100'000 * kUnit});
  price(PriceClass::kSpot, kUnitPerSecond / 2);
  const std::string spot = "ins_00000000000000f1";
  ok(CreateInstance{
      spot,
      kTenant1,
      kProject1,
      "usr_1",
      {.gpus = 8, .price_class = PriceClass::kSpot, .command = {"true"}, .requeue = true}});
  ASSERT_EQ(instance(spot).state, InstanceState::kScheduled);
  ASSERT_FALSE(instance(spot).hold_id.empty());
  for (int round = 1; round <= 2; ++round) {
    const TimeMs at = kT0 + static_cast<TimeMs>(round) * 1'000;
    const std::string urgent = fmt::format("ins_00000000000000e{}", round);
    ok(CreateInstance{urgent, kTenant1, kProject1, "usr_1", {.gpus = 8, .command = {"true"}}}, at);
    EXPECT_EQ(instance(spot).state, InstanceState::kQueued) << "round " << round;
    EXPECT_TRUE(instance(spot).hold_id.empty()) << "round " << round;
    ok(StopInstance{urgent}, at + 1);  // The room is free again: the spot work is placed anew.
    beat({{urgent, WorkloadReportState::kExited}}, at + 2);
    ok(Tick{}, at + 3);
    // Placed again, and not started: the next round preempts it before it runs once more.
    EXPECT_NE(instance(spot).state, InstanceState::kQueued) << "round " << round;
    EXPECT_EQ(instance(spot).started_at_ms, 0) << "round " << round;
    EXPECT_FALSE(instance(spot).hold_id.empty()) << "round " << round;
  }
  int64_t held = 0;
  for (const auto& [id, i] : core.state().instances) held += i.hold_micros;
  EXPECT_EQ(
      core.state().ledger.account(tenant_account(kTenant1, BillingMode::kPrepaid))->debits_pending,
      held);
  expect_ledger_sums_to_zero();
}

// Any mix of top-ups, credits, launches, stops, price changes and ticks: the ledger sums to zero
// after every step, no prepaid balance goes below zero, and once the books close every tenant's
// posted usage equals the charges of its instances exactly.
TEST_F(MoneyTest, PropertyAnySequenceKeepsTheBooksExact) {
  const uint64_t seed = 20261201;
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  const std::string other = "ten_0000000000000002";
  ok(CreateTenant{other, "beta"});
  ok(CreateProject{"prj_0000000000000002", other, "p"});
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(SetBilling{other, BillingMode::kPostpaid, 40 * kUnit});
  const std::string tenants[] = {kTenant1, other};
  const std::string projects[] = {kProject1, "prj_0000000000000002"};
  std::vector<std::string> launched;
  TimeMs now = kT0;
  for (int step = 0; step < 400; ++step) {
    now += static_cast<TimeMs>(rng() % 20'000);
    const size_t who = rng() % 2;
    switch (rng() % 6) {
      case 0:
        (void)core.apply(Topup{.id = fmt::format("t{}", step),
                               .tenant_id = tenants[who],
                               .amount_micros = static_cast<int64_t>(rng() % (30 * kUnit)) + 1,
                               .credit = rng() % 3 == 0,
                               .expires_at_ms = rng() % 2 == 0 ? 0 : now + 30'000},
                         now);
        break;
      case 1: {
        const std::string id = fmt::format("ins_{:016x}", ++next_);
        InstanceSpec spec{.command = {"true"}};
        if (rng() % 2 == 0) {
          spec.gpus = static_cast<int>(rng() % 3) + 1;
        } else {
          spec.gpu_milli = static_cast<int>(rng() % 999) + 1;
        }
        if (core.apply(CreateInstance{id, tenants[who], projects[who], "usr_1", spec}, now)) {
          launched.push_back(id);
        }
        break;
      }
      case 2:
        if (!launched.empty())
          (void)core.apply(StopInstance{launched[rng() % launched.size()]}, now);
        break;
      case 3:
        price(PriceClass::kOnDemand, static_cast<int64_t>(rng() % (7'200 * kUnit)) + 1, now);
        break;
      default:
        advance(now, now);  // The node reports its work running (or gone), then the timer.
        break;
    }
    const auto sums = core.state().ledger.sums();
    ASSERT_TRUE(sums.posted == 0 && sums.pending == 0) << "step " << step;
    // What the instances say they hold is what the ledger holds.
    for (const std::string& tenant : tenants) {
      int64_t held = 0;
      for (const auto& [id, i] : core.state().instances) {
        if (i.tenant_id == tenant) held += i.hold_micros;
      }
      const ledger::Account* own =
          core.state().ledger.account(tenant_account(tenant, core.state().tenant(tenant)->billing));
      ASSERT_EQ(own == nullptr ? 0 : own->debits_pending, held) << "step " << step;
    }
    ASSERT_GE(balance(now).cash_micros, 0) << "step " << step;
  }
  ok(Tick{.post_all = true}, now);
  for (const std::string& tenant : tenants) {
    int64_t charged = 0;
    for (const auto& [id, i] : core.state().instances) {
      if (i.tenant_id != tenant) continue;
      auto usage = usage_of(core.state(), i, now);
      const int64_t charge = usage ? *charge_of(core.state(), *usage) : 0;
      EXPECT_EQ(i.billed_micros, charge) << id;
      charged += charge;
    }
    int64_t posted = 0;
    for (const ledger::Transfer& t : core.state().ledger.transfers()) {
      if (t.code == "usage" && t.debit_account_id.starts_with("tenant/" + tenant + "/")) {
        posted += t.amount;
      }
    }
    EXPECT_EQ(posted, charged) << tenant;
  }
  EXPECT_GE(balance(now).cash_micros, 0);
  EXPECT_GE(balance_of(core.state(), other, now)->cash_micros, -40 * kUnit);
  // The sequence did what it is meant to test: work ran, was billed, and money ran out.
  int ran = 0, ran_out = 0;
  for (const auto& [id, i] : core.state().instances) {
    ran += i.billed_micros > 0 ? 1 : 0;
    ran_out += i.reason.starts_with("stopped: the") ? 1 : 0;
  }
  EXPECT_GT(ran, 10);
  EXPECT_GT(ran_out, 0);
}

}  // namespace
}  // namespace allot
