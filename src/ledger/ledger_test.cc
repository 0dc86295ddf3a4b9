#include "ledger/ledger.h"

#include <random>

#include <gtest/gtest.h>

namespace allot::ledger {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ledger.create_account({.id = "operator", .code = "operator"}, kT0));
    ASSERT_TRUE(ledger.create_account(
        {.id = "cash", .code = "tenant_cash", .debits_must_not_exceed_credits = true}, kT0));
    ASSERT_TRUE(ledger.create_account({.id = "revenue", .code = "revenue"}, kT0));
  }

  Status single(const std::string& id, const std::string& from, const std::string& to,
                int64_t amount, TimeMs at = kT0) {
    return ledger.create_transfer(
        {.id = id, .debit_account_id = from, .credit_account_id = to, .amount = amount}, at);
  }

  void expect_zero_sum() const {
    EXPECT_TRUE(ledger.sums().posted == 0);
    EXPECT_TRUE(ledger.sums().pending == 0);
  }

  Ledger ledger;
};

TEST_F(LedgerTest, ATopUpAndAChargeMoveMoneyBetweenTwoAccounts) {
  ASSERT_TRUE(single("t1", "operator", "cash", 10'000'000));
  ASSERT_TRUE(single("t2", "cash", "revenue", 2'500'000));
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 7'500'000);
  EXPECT_EQ(ledger.account("revenue")->credit_balance(), 2'500'000);
  EXPECT_EQ(ledger.account("operator")->credit_balance(), -10'000'000);
  expect_zero_sum();
}

TEST_F(LedgerTest, AReplayedTransferIsHarmlessAndAChangedOneIsAConflict) {
  ASSERT_TRUE(single("t1", "operator", "cash", 5'000'000));
  ASSERT_TRUE(single("t1", "operator", "cash", 5'000'000, kT0 + 1000));
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 5'000'000);
  EXPECT_EQ(ledger.transfers().size(), 1u);
  EXPECT_EQ(ledger.transfer("t1")->created_at_ms, kT0);  // The first one stands.
  EXPECT_EQ(single("t1", "operator", "cash", 6'000'000).error().code, ErrorCode::kConflict);
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 5'000'000);
}

TEST_F(LedgerTest, BadTransfersAreRefusedAndMoveNothing) {
  ASSERT_TRUE(single("t1", "operator", "cash", 1'000'000));
  struct Case {
    const char* name;
    Transfer transfer;
    ErrorCode code;
  };
  const Case cases[] = {
      {"zero amount",
       {.id = "x", .debit_account_id = "operator", .credit_account_id = "cash"},
       ErrorCode::kInvalidArgument},
      {"negative amount",
       {.id = "x", .debit_account_id = "operator", .credit_account_id = "cash", .amount = -1},
       ErrorCode::kInvalidArgument},
      {"no id",
       {.debit_account_id = "operator", .credit_account_id = "cash", .amount = 1},
       ErrorCode::kInvalidArgument},
      {"one account twice",
       {.id = "x", .debit_account_id = "cash", .credit_account_id = "cash", .amount = 1},
       ErrorCode::kInvalidArgument},
      {"unknown account",
       {.id = "x", .debit_account_id = "nobody", .credit_account_id = "cash", .amount = 1},
       ErrorCode::kNotFound},
      {"past the balance",
       {.id = "x", .debit_account_id = "cash", .credit_account_id = "revenue", .amount = 1'000'001},
       ErrorCode::kInsufficientFunds},
      {"overflowing",
       {.id = "x",
        .debit_account_id = "operator",
        .credit_account_id = "cash",
        .amount = INT64_MAX},
       ErrorCode::kOverflow},
      {"post of nothing",
       {.id = "x", .kind = TransferKind::kPostPending, .pending_id = "none"},
       ErrorCode::kNotFound},
  };
  const auto before = ledger.accounts();
  for (const Case& c : cases) {
    const Status result = ledger.create_transfer(c.transfer, kT0);
    ASSERT_FALSE(result) << c.name;
    EXPECT_EQ(result.error().code, c.code) << c.name << ": " << result.error().message;
    EXPECT_EQ(ledger.accounts(), before) << c.name;
    EXPECT_EQ(ledger.transfer("x"), nullptr) << c.name;
  }
}

TEST_F(LedgerTest, AHoldReservesUntilPostedForLessAndTheRestIsFreed) {
  ASSERT_TRUE(single("t1", "operator", "cash", 10'000'000));
  ASSERT_TRUE(ledger.create_transfer({.id = "hold",
                                      .debit_account_id = "cash",
                                      .credit_account_id = "revenue",
                                      .amount = 8'000'000,
                                      .kind = TransferKind::kPending},
                                     kT0));
  // The hold counts against the balance limit: only 2 are left to spend.
  EXPECT_EQ(single("t2", "cash", "revenue", 2'000'001).error().code, ErrorCode::kInsufficientFunds);
  ASSERT_TRUE(ledger.create_transfer(
      {.id = "post", .amount = 3'000'000, .kind = TransferKind::kPostPending, .pending_id = "hold"},
      kT0 + 1));
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 7'000'000);
  EXPECT_EQ(ledger.account("cash")->debits_pending, 0);
  EXPECT_EQ(ledger.pending_state("hold"), PendingState::kPosted);
  EXPECT_EQ(
      ledger
          .create_transfer(
              {.id = "again", .kind = TransferKind::kVoidPending, .pending_id = "hold"}, kT0 + 2)
          .error()
          .code,
      ErrorCode::kConflict);
  expect_zero_sum();
}

TEST_F(LedgerTest, AVoidedOrExpiredHoldFreesItsAmount) {
  ASSERT_TRUE(single("t1", "operator", "cash", 10'000'000));
  Transfer hold{.id = "h1",
                .debit_account_id = "cash",
                .credit_account_id = "revenue",
                .amount = 4'000'000,
                .kind = TransferKind::kPending};
  ASSERT_TRUE(ledger.create_transfer(hold, kT0));
  ASSERT_TRUE(ledger.create_transfer(
      {.id = "v1", .kind = TransferKind::kVoidPending, .pending_id = "h1"}, kT0 + 1));
  EXPECT_EQ(ledger.account("cash")->debits_pending, 0);
  hold.id = "h2";
  hold.timeout_ms = 60'000;
  ASSERT_TRUE(ledger.create_transfer(hold, kT0));
  EXPECT_TRUE(ledger.expire(kT0 + 59'999).empty());
  EXPECT_EQ(ledger.expire(kT0 + 60'000), std::vector<std::string>{"h2"});
  // Expired, it can no longer be posted; a hold whose time is up is freed by the next transfer
  // even without a sweep.
  EXPECT_EQ(
      ledger
          .create_transfer({.id = "p2", .kind = TransferKind::kPostPending, .pending_id = "h2"},
                           kT0 + 60'000)
          .error()
          .code,
      ErrorCode::kConflict);
  hold.id = "h3";
  ASSERT_TRUE(ledger.create_transfer(hold, kT0 + 100'000));
  ASSERT_TRUE(single("t2", "cash", "revenue", 10'000'000, kT0 + 160'000));
  EXPECT_EQ(ledger.pending_state("h3"), PendingState::kExpired);
  ASSERT_TRUE(single("t3", "revenue", "cash", 10'000'000, kT0 + 160'001));
  EXPECT_EQ(ledger.pending_state("h2"), PendingState::kExpired);
  EXPECT_EQ(ledger.account("cash")->debits_pending, 0);
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 10'000'000);
  expect_zero_sum();
}

TEST_F(LedgerTest, LinkedTransfersSucceedOrFailTogether) {
  ASSERT_TRUE(single("t1", "operator", "cash", 1'000'000));
  const std::vector<Transfer> chain = {
      {.id = "a",
       .debit_account_id = "cash",
       .credit_account_id = "revenue",
       .amount = 600'000,
       .linked = true},
      {.id = "b", .debit_account_id = "cash", .credit_account_id = "revenue", .amount = 600'000},
  };
  const auto results = ledger.create_transfers(chain, kT0);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error().code, ErrorCode::kLinkedFailed);  // Linked to the one that failed.
  EXPECT_EQ(results[1].error().code, ErrorCode::kInsufficientFunds);
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 1'000'000);
  EXPECT_EQ(ledger.transfer("a"), nullptr);
  std::vector<Transfer> fits = chain;
  fits[1].amount = 400'000;
  for (const Status& r : ledger.create_transfers(fits, kT0)) EXPECT_TRUE(r);
  EXPECT_EQ(ledger.account("cash")->credit_balance(), 0);
  // A chain left open at the end of a batch is refused whole.
  const std::vector<Transfer> open = {{.id = "c",
                                       .debit_account_id = "operator",
                                       .credit_account_id = "cash",
                                       .amount = 1,
                                       .linked = true}};
  EXPECT_FALSE(ledger.create_transfers(open, kT0)[0]);
  expect_zero_sum();
}

TEST_F(LedgerTest, AnAccountIsCreatedOnceAndCannotChangeItsLimits) {
  EXPECT_TRUE(ledger.create_account({.id = "revenue", .code = "revenue"}, kT0 + 5));
  EXPECT_EQ(ledger.account("revenue")->created_at_ms, kT0);
  EXPECT_EQ(
      ledger
          .create_account(
              {.id = "revenue", .code = "revenue", .debits_must_not_exceed_credits = true}, kT0)
          .error()
          .code,
      ErrorCode::kConflict);
  EXPECT_FALSE(ledger.create_account({.id = "both",
                                      .debits_must_not_exceed_credits = true,
                                      .credits_must_not_exceed_debits = true},
                                     kT0));
}

// Random sequences of every kind of operation, replays included: the ledger always sums to zero,
// the prepaid account never goes below zero, and a replayed transfer changes nothing.
TEST_F(LedgerTest, PropertyAnySequenceSumsToZeroAndReplaysAreHarmless) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> accounts = {"operator", "cash", "revenue"};
  std::vector<Transfer> made;
  std::vector<std::string> holds;
  for (int step = 0; step < 5'000; ++step) {
    const TimeMs now = kT0 + TimeMs{step} * 1000;
    const int what = static_cast<int>(rng() % 6);
    Transfer t{.id = "t" + std::to_string(step), .amount = static_cast<int64_t>(rng() % 5'000'000)};
    t.debit_account_id = accounts[rng() % 3];
    t.credit_account_id = accounts[rng() % 3];
    if (what == 1) {
      t.kind = TransferKind::kPending;
      t.timeout_ms = static_cast<int64_t>(rng() % 3) * 10'000;
    } else if ((what == 2 || what == 3) && !holds.empty()) {
      t = Transfer{.id = t.id,
                   .amount = what == 2 ? static_cast<int64_t>(rng() % 2'000'000) : 0,
                   .kind = what == 2 ? TransferKind::kPostPending : TransferKind::kVoidPending,
                   .pending_id = holds[rng() % holds.size()]};
    } else if (what == 4 && !made.empty()) {
      ledger.expire(now);  // What time alone does, apart from the replay.
      const auto before = ledger.accounts();
      const Transfer& again = made[rng() % made.size()];
      ASSERT_TRUE(ledger.create_transfer(again, now)) << again.id;
      ASSERT_EQ(ledger.accounts(), before) << "replaying " << again.id << " changed balances";
      continue;
    } else if (what == 5) {
      ledger.expire(now);
      continue;
    }
    const Status result = ledger.create_transfer(t, now);
    if (result) {
      made.push_back(t);
      if (t.kind == TransferKind::kPending) holds.push_back(t.id);
    }
    ASSERT_TRUE(ledger.sums().posted == 0) << step;
    ASSERT_TRUE(ledger.sums().pending == 0) << step;
    const Account& cash = *ledger.account("cash");
    ASSERT_GE(cash.credits_posted - cash.debits_posted - cash.debits_pending, 0) << step;
  }
  EXPECT_GT(made.size(), 1'000u);
}

}  // namespace
}  // namespace allot::ledger
