#include "core/money/storage.h"

#include <gtest/gtest.h>

#include "core/money/money.h"
#include "core/money/spend.h"
#include "core/test_core.h"

namespace allot {
namespace {

const std::string kVolume = "vol_0000000000000001";

class StorageTest : public CoreTest {
 protected:
  StorageTest()
      : CoreTest(CoreOptions{.heartbeat_timeout_ms = 30'000, .rating_interval_ms = 10'000}) {}

  void SetUp() override {
    for (const Command& c : one_node_cloud(kTenant1, kProject1, kNode1, kToken)) ok(c);
    for (const Command& c : free_prices("eu", kT0)) ok(c);
    // 2,628 units per GB-month of 730 hours: a 1,000 GB volume costs one unit a second.
    ok(SetPrice{{.key = meter::storage_key("eu"),
                 .effective_ms = kT0,
                 .storage_gb_month_micros = 2'628 * kUnit}});
  }

  void create(int64_t size_gb, const std::string& region = "eu") {
    ok(CreateVolume{Volume{.id = kVolume,
                           .tenant_id = kTenant1,
                           .project_id = kProject1,
                           .name = "data",
                           .region = region,
                           .backend = std::string(kVolumeNfs),
                           .size_gb = size_gb}});
  }

  void tick_to(TimeMs from, TimeMs until) {
    for (TimeMs at = from; at <= until; at += 5'000) ok(Tick{}, at);
  }

  const Volume& volume() { return *core.state().volume(kVolume); }
  Balance balance(TimeMs at) { return *balance_of(core.state(), kTenant1, at); }

  // What the ledger's storage postings took, in all.
  int64_t storage_posted() {
    int64_t sum = 0;
    for (const ledger::Transfer& t : core.state().ledger.transfers()) {
      if (t.code == "storage") sum += t.amount;
    }
    return sum;
  }

  void expect_ledger_sums_to_zero() {
    const auto sums = core.state().ledger.sums();
    EXPECT_TRUE(sums.posted == 0 && sums.pending == 0);
  }
};

TEST_F(StorageTest, AVolumeIsPostedEveryIntervalAndInFullAtItsDeletion) {
  create(1'000);
  tick_to(kT0 + 5'000, kT0 + 35'000);
  // Posted at 10, 20 and 30 s: 30 units; the last 5 s are accrued, not yet posted.
  EXPECT_EQ(volume().billed_micros, 30 * kUnit);
  EXPECT_EQ(storage_posted(), 30 * kUnit);
  EXPECT_EQ(balance(kT0 + 35'000).cash_micros, -30 * kUnit);  // Postpaid: owed.
  EXPECT_EQ(balance(kT0 + 35'000).unposted_micros, 5 * kUnit);
  // Budgets count it in the month's spend, under the volume's project.
  const TenantSpend spend = month_spend(core.state(), kTenant1, kT0 + 35'000);
  EXPECT_EQ(spend.total_micros, 35 * kUnit);
  EXPECT_EQ(spend.of(kProject1), 35 * kUnit);
  // Deleted 47.5 s in: billed for 47 whole seconds, posted at the next tick, then settled.
  ok(DeleteVolume{kVolume}, kT0 + 47'500);
  ok(Tick{}, kT0 + 48'000);
  EXPECT_TRUE(volume().settled);
  EXPECT_EQ(volume().billed_micros, 47 * kUnit);
  EXPECT_EQ(storage_posted(), 47 * kUnit);
  EXPECT_TRUE(core.state().unsettled_volumes.empty());
  // Nothing more is posted once it is settled.
  tick_to(kT0 + 60'000, kT0 + 120'000);
  EXPECT_EQ(storage_posted(), 47 * kUnit);
  expect_ledger_sums_to_zero();
}

TEST_F(StorageTest, AnOddSizeIsChargedTheFloorOfRateTimesGbTimesSecondsOverAMonth) {
  ok(SetPrice{{.key = meter::storage_key("us"),
               .effective_ms = kT0,
               .storage_gb_month_micros = 100'000}});  // 0.10 a GB-month.
  create(7, "us");
  ok(DeleteVolume{kVolume}, kT0 + 3'600'000);
  ok(Tick{}, kT0 + 3'600'000);
  // 100,000 x 7 x 3,600 / 2,628,000 = 958.90..., floored.
  EXPECT_EQ(volume().billed_micros, 958);
  EXPECT_EQ(storage_posted(), 958);
}

TEST_F(StorageTest, PromotionalCreditsPayForStorageFirst) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 100 * kUnit});
  ok(Topup{.id = "gift", .tenant_id = kTenant1, .amount_micros = 4 * kUnit, .credit = true});
  create(1'000);
  tick_to(kT0 + 5'000, kT0 + 10'000);
  EXPECT_EQ(balance(kT0 + 10'000).credits_micros, 0);
  EXPECT_EQ(balance(kT0 + 10'000).cash_micros, 94 * kUnit);
  expect_ledger_sums_to_zero();
}

TEST_F(StorageTest, APrepaidTenantOutOfMoneyKeepsItsVolumeOwesTheRestAndStartsNoWork) {
  ok(SetBilling{kTenant1, BillingMode::kPrepaid});
  ok(Topup{.id = "pay-1", .tenant_id = kTenant1, .amount_micros = 10 * kUnit});
  create(1'000);
  tick_to(kT0 + 5'000, kT0 + 30'000);
  // The balance paid what it had and never went below zero; the rest is owed.
  EXPECT_EQ(balance(kT0 + 30'000).cash_micros, 0);
  EXPECT_EQ(volume().billed_micros, 10 * kUnit);
  EXPECT_EQ(balance(kT0 + 30'000).unposted_micros, 20 * kUnit);
  EXPECT_EQ(volume().deleted_at_ms, 0);  // Storage is not taken away.
  EXPECT_EQ(refused(CreateInstance{"ins_00000000000000ff", kTenant1, kProject1, "usr_1",
                                   InstanceSpec{.gpus = 1, .command = {"true"}}},
                    kT0 + 30'000),
            ErrorCode::kInsufficientFunds);
  // Nor does it make more storage.
  const Volume more{.id = "vol_0000000000000002",
                    .tenant_id = kTenant1,
                    .project_id = kProject1,
                    .name = "more",
                    .region = "eu",
                    .backend = std::string(kVolumeNfs),
                    .size_gb = 1};
  EXPECT_EQ(refused(CreateVolume{more}, kT0 + 30'000), ErrorCode::kInsufficientFunds);
  // Money paid in settles what is owed at the next posting.
  ok(Topup{.id = "pay-2", .tenant_id = kTenant1, .amount_micros = 100 * kUnit}, kT0 + 30'000);
  ok(Tick{}, kT0 + 40'000);
  EXPECT_EQ(volume().billed_micros, 40 * kUnit);
  EXPECT_EQ(balance(kT0 + 40'000).cash_micros, 70 * kUnit);
  expect_ledger_sums_to_zero();
}

TEST_F(StorageTest, AStoragePriceHasOnlyItsRateAndStaysOutOfTheGpuPrices) {
  const size_t gpu_prices = core.state().prices.prices().size();
  EXPECT_EQ(refused(SetPrice{{.key = meter::storage_key("eu"),
                              .effective_ms = kT0 + 1'000,
                              .gpu_hour_micros = kUnit}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetPrice{{.key = meter::storage_key("eu"),
                              .effective_ms = kT0 + 1'000,
                              .storage_gb_month_micros = -1}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(SetPrice{{.key = meter::storage_key("eu"),
                              .effective_ms = kT0,
                              .storage_gb_month_micros = kUnit}}),
            ErrorCode::kAlreadyExists);
  EXPECT_EQ(refused(SetPrice{{.key = meter::storage_key("eu"),
                              .effective_ms = kT0 - 1,
                              .storage_gb_month_micros = kUnit}},
                    kT0),
            ErrorCode::kInvalidArgument);  // Never backwards.
  EXPECT_EQ(refused(SetPrice{{.key = meter::storage_key("Not A Region"),
                              .effective_ms = kT0,
                              .storage_gb_month_micros = kUnit}}),
            ErrorCode::kInvalidArgument);  // No volume can be there.
  EXPECT_EQ(core.state().prices.prices().size(), gpu_prices);
}

TEST_F(StorageTest, APriceChangeAppliesFromItsSecondOnAndTheMonthsAddUp) {
  create(1'000);
  ok(SetPrice{{.key = meter::storage_key("eu"),
               .effective_ms = kT0 + 20'000,
               .storage_gb_month_micros = 2 * int64_t{2'628} * kUnit}});
  const StorageUse use = storage_use(volume(), kT0 + 30'000);
  const int64_t start_s = kT0 / 1000;
  // 20 s at one unit a second, then 10 s at two.
  EXPECT_EQ(storage_between(core.state(), use, start_s, start_s + 30), 40 * kUnit);
  // Any cut adds up to the whole.
  for (int64_t cut = 0; cut <= 30; ++cut) {
    EXPECT_EQ(*storage_between(core.state(), use, start_s, start_s + cut) +
                  *storage_between(core.state(), use, start_s + cut, start_s + 30),
              40 * kUnit);
  }
}

}  // namespace
}  // namespace allot
