// Money moves with the invoice documents: a recorded payment pays in what is due, and a credit
// note gives back to the tenant's account; the ledger sums to zero throughout.
#include <gtest/gtest.h>

#include "common/clock.h"
#include "core/model/accounts.h"
#include "core/money/money.h"
#include "core/test_core.h"
#include "reports/invoice_draft.h"

namespace allot {
namespace {

constexpr TimeMs kHour = 3'600'000;

class InvoicePaymentTest : public CoreTest {
 protected:
  InvoicePaymentTest()
      : CoreTest(CoreOptions{.heartbeat_timeout_ms = 30'000, .rating_interval_ms = 10'000}) {}

  // A postpaid tenant that ran one GPU for an hour at one unit per GPU-second: it owes 3,600.
  void SetUp() override {
    for (const Command& c : one_node_cloud(kTenant1, kProject1, kNode1, kToken)) ok(c);
    ok(SetPrice{{.key = {.model = "H100-80GB", .region = "eu"},
                 .effective_ms = kT0,
                 .gpu_hour_micros = 3'600 * kUnit}});
    const std::string id = next_id();
    ok(CreateInstance{id, kTenant1, kProject1, "usr_1", {.gpus = 1, .command = {"true"}}});
    for (TimeMs at = kT0 + 1'000; at <= kT0 + kHour + 1'000; at += 10'000) {
      beat_and_tick(kNode1, at);
    }
    ok(StopInstance{id}, kT0 + kHour + 1'000);
    beat_and_tick(kNode1, kT0 + kHour + 2'000);
    beat_and_tick(kNode1, kT0 + kHour + 3'000);
    ASSERT_TRUE(instance(id).settled);
    owed_ = -cash();
    ASSERT_GT(owed_, 0);

    auto draft = billing::draft_month(core.state(), kTenant1, month_start(kT0), kNow, 0);
    ASSERT_TRUE(draft) << draft.error().message;
    draft->id = kInvoice;
    ok(*draft, kNow);
    ok(FinalizeInvoice{kInvoice, true}, kNow);
  }

  int64_t cash() const { return balance_of(core.state(), kTenant1, kNow)->cash_micros; }
  const Invoice& invoice() const { return *core.state().invoice(kInvoice); }
  void expect_ledger_sums_to_zero() const {
    const auto sums = core.state().ledger.sums();
    EXPECT_EQ(sums.posted, 0);
    EXPECT_EQ(sums.pending, 0);
  }

  static constexpr TimeMs kNow = kT0 + 2 * kHour;
  inline static const std::string kInvoice = "inv_0000000000000001";
  int64_t owed_ = 0;
};

TEST_F(InvoicePaymentTest, APaymentRecordedOnceShowsInTheInvoiceTheBalanceAndTheLedger) {
  EXPECT_EQ(invoice().total_micros, owed_);
  EXPECT_EQ(invoice().due_micros(), owed_);
  // Owing, the tenant cannot turn prepaid.
  EXPECT_EQ(refused(SetBilling{kTenant1, BillingMode::kPrepaid}, kNow), ErrorCode::kConflict);

  ok(MarkInvoicePaid{kInvoice}, kNow);
  EXPECT_EQ(invoice().status, InvoiceStatus::kPaid);
  EXPECT_EQ(invoice().payment_micros, owed_);
  EXPECT_EQ(invoice().due_micros(), 0);
  EXPECT_EQ(cash(), 0);
  const ledger::Transfer* paid = core.state().ledger.transfer("invoice/" + kInvoice + "/paid");
  ASSERT_NE(paid, nullptr);
  EXPECT_EQ(paid->debit_account_id, kFundingAccount);
  EXPECT_EQ(paid->credit_account_id, tenant_account(kTenant1, BillingMode::kPostpaid));
  EXPECT_EQ(paid->amount, owed_);
  expect_ledger_sums_to_zero();

  // Recorded twice, it is refused and moves nothing.
  EXPECT_EQ(refused(MarkInvoicePaid{kInvoice}, kNow), ErrorCode::kConflict);
  EXPECT_EQ(cash(), 0);
  ok(SetBilling{kTenant1, BillingMode::kPrepaid}, kNow);
  expect_ledger_sums_to_zero();
}

TEST_F(InvoicePaymentTest, ACreditNoteComesOffWhatIsOwedAndAfterPaymentIsBalanceToSpend) {
  ok(CreateCreditNote{"crn_0000000000000001", kInvoice, 600 * kUnit, "an outage"}, kNow);
  EXPECT_EQ(cash(), -(owed_ - 600 * kUnit));
  EXPECT_EQ(invoice().due_micros(), owed_ - 600 * kUnit);
  expect_ledger_sums_to_zero();

  ok(MarkInvoicePaid{kInvoice}, kNow);
  EXPECT_EQ(invoice().payment_micros, owed_ - 600 * kUnit);
  EXPECT_EQ(cash(), 0);

  // Given back after it was paid: the tenant has it to spend.
  ok(CreateCreditNote{"crn_0000000000000002", kInvoice, 100 * kUnit, "goodwill"}, kNow);
  EXPECT_EQ(cash(), 100 * kUnit);
  EXPECT_EQ(invoice().due_micros(), 0);
  const ledger::Transfer* back = core.state().ledger.transfer("credit-note/crn_0000000000000002");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->debit_account_id, kRevenueAccount);
  expect_ledger_sums_to_zero();
}

}  // namespace
}  // namespace allot
