#include "reports/invoice_draft.h"

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/money/metering.h"
#include "reports/test_state.h"

namespace allot::billing {
namespace {

using namespace testing;

const TimeMs kNov = at("2026-11-01T00:00:00Z");
const TimeMs kDec = at("2026-12-01T00:00:00Z");
const TimeMs kLater = at("2027-01-15T00:00:00Z");

DraftInvoice draft(const State& state, TimeMs month_ms, int64_t credits = 0) {
  auto command = draft_month(state, kTenant, month_ms, kLater, credits);
  EXPECT_TRUE(command) << command.error().message;
  return command ? *command : DraftInvoice{};
}

int64_t whole_charge(const State& state, const std::string& id) {
  auto usage = usage_of(state, state.instances.at(id), kLater);
  EXPECT_TRUE(usage);
  auto charge = charge_of(state, *usage);
  EXPECT_TRUE(charge);
  return *charge;
}

TEST(DraftMonth, OneLinePerProjectModelRegionAndClass) {
  State state = base_state();
  add_price(state, 3'600 * kUnit, 0);  // One unit per GPU-second.
  add_price(state, 1'800 * kUnit, 0, PriceClass::kSpot);
  // Two vision instances on demand share a line; a spot one and a speech one have their own.
  state.put(ran("ins_01", kTenant, kVision, 2, 0, at("2026-11-02T00:00:00Z"),
                at("2026-11-02T01:00:00Z")));
  state.put(ran("ins_02", kTenant, kVision, 1, 0, at("2026-11-03T00:00:00Z"),
                at("2026-11-03T00:30:00Z")));
  state.put(ran("ins_03", kTenant, kVision, 1, 0, at("2026-11-04T00:00:00Z"),
                at("2026-11-04T01:00:00Z"), PriceClass::kSpot));
  state.put(ran("ins_04", kTenant, kSpeech, 4, 0, at("2026-11-05T00:00:00Z"),
                at("2026-11-05T00:00:10Z")));
  // Another tenant's use is not on this invoice.
  state.put(ran("ins_05", kOther, "prj_0000000000000009", 8, 0, at("2026-11-05T00:00:00Z"),
                at("2026-11-06T00:00:00Z")));

  const DraftInvoice invoice = draft(state, kNov);
  ASSERT_EQ(invoice.lines.size(), 3u);
  EXPECT_EQ(invoice.lines[0].project_id, kVision);
  EXPECT_EQ(invoice.lines[0].key.price_class, PriceClass::kOnDemand);
  EXPECT_EQ(invoice.lines[0].gpu_milli_seconds, 2'000 * 3'600 + 1'000 * 1'800);
  EXPECT_EQ(invoice.lines[0].amount_micros, (7'200 + 1'800) * kUnit);
  EXPECT_EQ(invoice.lines[1].project_id, kVision);
  EXPECT_EQ(invoice.lines[1].key.price_class, PriceClass::kSpot);
  EXPECT_EQ(invoice.lines[1].amount_micros, 1'800 * kUnit);
  EXPECT_EQ(invoice.lines[2].project_id, kSpeech);
  EXPECT_EQ(invoice.lines[2].gpu_milli_seconds, 4'000 * 10);
  EXPECT_EQ(invoice.lines[2].amount_micros, 40 * kUnit);
  // Nothing ran in December.
  EXPECT_TRUE(draft(state, kDec).lines.empty());
}

TEST(DraftMonth, UseAcrossTheMonthsEndIsSplitAndTheMonthsAddUpToTheWhole) {
  State state = base_state();
  // A rate whose per-second charge is not whole, so that rounding would show.
  add_price(state, 2'333'333, 0);
  state.put(ran("ins_01", kTenant, kVision, 0, 333, at("2026-11-30T21:59:59Z"),
                at("2026-12-01T03:00:07Z")));
  const DraftInvoice nov = draft(state, kNov);
  const DraftInvoice dec = draft(state, kDec);
  ASSERT_EQ(nov.lines.size(), 1u);
  ASSERT_EQ(dec.lines.size(), 1u);
  EXPECT_EQ(nov.lines[0].gpu_milli_seconds, 333 * (2 * 3'600 + 1));
  EXPECT_EQ(dec.lines[0].gpu_milli_seconds, 333 * (3 * 3'600 + 7));
  EXPECT_EQ(nov.lines[0].amount_micros + dec.lines[0].amount_micros, whole_charge(state, "ins_01"));
  EXPECT_GT(nov.lines[0].amount_micros, 0);
  EXPECT_GT(dec.lines[0].amount_micros, 0);
}

TEST(DraftMonth, AVolumesStorageIsItsOwnLineSplitExactlyAcrossTheMonthsEnd) {
  State state = base_state();
  // 0.123457 a GB-month: per GB-second, nowhere near whole.
  state.put(meter::Price{
      .key = meter::storage_key("eu"), .effective_ms = 0, .storage_gb_month_micros = 123'457});
  state.put(Volume{.id = "vol_0000000000000001",
                   .tenant_id = kTenant,
                   .project_id = kSpeech,
                   .name = "ckpt",
                   .region = "eu",
                   .backend = "nfs",
                   .size_gb = 333,
                   .created_at_ms = at("2026-11-20T10:00:00.900Z"),
                   .deleted_at_ms = at("2026-12-03T04:05:06.700Z")});
  const DraftInvoice nov = draft(state, kNov);
  const DraftInvoice dec = draft(state, kDec);
  ASSERT_EQ(nov.lines.size(), 1u);
  ASSERT_EQ(dec.lines.size(), 1u);
  const InvoiceLine& line = nov.lines[0];
  EXPECT_TRUE(line.key.storage());
  EXPECT_EQ(line.key.region, "eu");
  EXPECT_EQ(line.project_id, kSpeech);
  EXPECT_EQ(line.gpu_milli_seconds, 0);
  // Whole seconds from its creation's second to its deletion's.
  const int64_t nov_s = at("2026-12-01T00:00:00Z") / 1000 - at("2026-11-20T10:00:00Z") / 1000;
  const int64_t dec_s = at("2026-12-03T04:05:06Z") / 1000 - at("2026-12-01T00:00:00Z") / 1000;
  EXPECT_EQ(line.gb_seconds, 333 * nov_s);
  EXPECT_EQ(dec.lines[0].gb_seconds, 333 * dec_s);
  // floor(rate x GB x seconds / 2,628,000) over the whole, split without a micro-unit lost.
  const int64_t whole = int64_t{123'457} * 333 * (nov_s + dec_s) / 2'628'000;
  EXPECT_EQ(line.amount_micros, int64_t{123'457} * 333 * nov_s / 2'628'000);
  EXPECT_EQ(line.amount_micros + dec.lines[0].amount_micros, whole);
  // Another tenant's invoice has none of it.
  auto other = draft_month(state, kOther, kNov, kLater, 0);
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->lines.empty());
}

TEST(DraftMonth, APriceChangeMidMonthChargesEachStretchAtItsRate) {
  State state = base_state();
  add_price(state, 3'600 * kUnit, 0);
  add_price(state, 7'200 * kUnit, at("2026-11-10T10:00:00Z"));
  state.put(ran("ins_01", kTenant, kVision, 1, 0, at("2026-11-10T00:00:00Z"),
                at("2026-11-10T15:00:00Z")));
  const DraftInvoice invoice = draft(state, kNov);
  ASSERT_EQ(invoice.lines.size(), 1u);
  // Ten hours at one unit a second, five at two.
  EXPECT_EQ(invoice.lines[0].amount_micros, (36'000 + 2 * 18'000) * kUnit);
  EXPECT_EQ(invoice.lines[0].amount_micros, whole_charge(state, "ins_01"));
}

TEST(DraftMonth, FractionalGpusCountTheirShare) {
  State state = base_state();
  add_price(state, 4 * kUnit, 0);
  state.put(ran("ins_01", kTenant, kVision, 0, 250, at("2026-11-10T00:00:00Z"),
                at("2026-11-10T04:00:00Z")));
  const DraftInvoice invoice = draft(state, kNov);
  ASSERT_EQ(invoice.lines.size(), 1u);
  EXPECT_EQ(invoice.lines[0].gpu_milli_seconds, 250 * 4 * 3'600);  // One GPU-hour.
  EXPECT_EQ(invoice.lines[0].amount_micros, 4 * kUnit);
}

TEST(DraftMonth, AnInstanceThatNeverRanAddsNothing) {
  State state = base_state();
  add_price(state, 4 * kUnit, 0);
  Instance queued = ran("ins_01", kTenant, kVision, 1, 0, 0, 0);
  queued.state = InstanceState::kStopped;
  queued.started_at_ms = 0;
  queued.ended_at_ms = at("2026-11-10T00:00:00Z");
  state.put(queued);
  EXPECT_TRUE(draft(state, kNov).lines.empty());
}

TEST(DraftMonth, RefusesUnknownTenantsAndMonthsThatAreNotMonths) {
  const State state = base_state();
  EXPECT_EQ(draft_month(state, "ten_ffffffffffffffff", kNov, kLater, 0).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(draft_month(state, kTenant, kNov + 1, kLater, 0).error().code,
            ErrorCode::kInvalidArgument);
}

// The lifecycle in the core: drafts are replaced, finals are frozen and numbered in one sequence.
class InvoiceLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    State state = base_state();
    std::vector<Row> rows = {state.tenants.at(kTenant), state.tenants.at(kOther),
                             state.projects.at(kVision), state.nodes.at(kNode)};
    core.restore(rows);
    add_price(state, 3'600 * kUnit, 0);
    rows = {state.prices.prices().begin()->second.begin()->second,
            ran("ins_01", kTenant, kVision, 1, 0, at("2026-11-02T00:00:00Z"),
                at("2026-11-02T00:01:40Z"))};
    core.restore(rows);
  }

  Result<std::vector<Row>> draft_for(const std::string& id, const std::string& tenant, TimeMs month,
                                     int64_t credits = 0) {
    auto command = draft_month(core.state(), tenant, month, kLater, credits);
    EXPECT_TRUE(command);
    command->id = id;
    return core.apply(*command, kLater);
  }

  ErrorCode rejection(const Command& command) {
    const State before = core.state();
    auto rows = core.apply(command, kLater);
    EXPECT_FALSE(rows);
    EXPECT_EQ(core.state().invoices, before.invoices);
    EXPECT_EQ(core.state().credit_notes, before.credit_notes);
    return rows ? ErrorCode::kInternal : rows.error().code;
  }

  const Invoice& invoice(const std::string& id) { return core.state().invoices.at(id); }

  // Drafts the tenant's month as seen at now_ms, under `id` (a re-draft keeps the draft's id).
  Result<std::vector<Row>> draft_at(const std::string& id, TimeMs month, TimeMs now_ms) {
    auto command = draft_month(core.state(), kTenant, month, now_ms,
                               invoice_credits(core.state(), kTenant, month, now_ms));
    EXPECT_TRUE(command);
    command->id = id;
    return core.apply(*command, now_ms);
  }

  // The tenant's billed GPU milli-seconds and amount summed over the given invoices.
  std::pair<int64_t, int64_t> billed(std::initializer_list<std::string> ids) {
    std::pair<int64_t, int64_t> sum;
    for (const std::string& id : ids) {
      for (const InvoiceLine& line : invoice(id).lines) {
        sum.first += line.gpu_milli_seconds;
        sum.second += line.amount_micros;
      }
    }
    return sum;
  }

  Core core;
};

// Work that runs from November 20th into December, billed with November finalized early.
class EarlyInvoice : public InvoiceLifecycle {
 protected:
  void SetUp() override {
    InvoiceLifecycle::SetUp();
    core.restore(std::vector<Row>{ran("ins_02", kTenant, kVision, 2, 0, at("2026-11-20T00:00:00Z"),
                                      at("2026-12-05T00:00:00Z"))});
  }

  // Everything the tenant ran, GPU milli-seconds and amount, as a whole.
  std::pair<int64_t, int64_t> ran_in_all() {
    return {int64_t{1'000} * 100 + int64_t{2'000} * 15 * 86'400,
            whole_charge(core.state(), "ins_01") + whole_charge(core.state(), "ins_02")};
  }

  const TimeMs mid_ = at("2026-11-25T00:00:00Z");
};

TEST_F(EarlyInvoice, AMonthThatHasNotEndedIsFinalizedOnlyEarlyOnPurpose) {
  ASSERT_TRUE(draft_at("inv_0000000000000001", kNov, mid_));
  const State before = core.state();
  auto refused = core.apply(FinalizeInvoice{"inv_0000000000000001"}, mid_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kPeriodOpen);
  EXPECT_EQ(core.state().invoices, before.invoices);

  ASSERT_TRUE(core.apply(FinalizeInvoice{.id = "inv_0000000000000001", .early = true}, mid_));
  EXPECT_TRUE(invoice("inv_0000000000000001").early);
  EXPECT_EQ(invoice("inv_0000000000000001").period_start_ms, kNov);
  EXPECT_EQ(invoice("inv_0000000000000001").period_end_ms, mid_);
  // Finalized after its month has ended, an invoice is not early, and needs no asking.
  ASSERT_TRUE(draft_at("inv_0000000000000002", kDec, kLater));
  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000002"}, kLater));
  EXPECT_FALSE(invoice("inv_0000000000000002").early);
}

TEST_F(EarlyInvoice, TheNextMonthCarriesTheRestSoNothingIsBilledTwiceOrLost) {
  ASSERT_TRUE(draft_at("inv_0000000000000001", kNov, mid_));
  // Usage after the draft read it, and before it was finalized, is not on it either.
  const TimeMs finalized_ms = mid_ + 3'600'000;
  ASSERT_TRUE(
      core.apply(FinalizeInvoice{.id = "inv_0000000000000001", .early = true}, finalized_ms));
  EXPECT_EQ(billed({"inv_0000000000000001"}).first,
            int64_t{1'000} * 100 + int64_t{2'000} * 5 * 86'400);
  // December's invoice starts where November's ended, at the draft.
  ASSERT_TRUE(draft_at("inv_0000000000000002", kDec, kLater));
  EXPECT_EQ(invoice("inv_0000000000000002").period_start_ms, mid_);
  EXPECT_EQ(invoice("inv_0000000000000002").period_end_ms, kDec + 31LL * 86'400'000);
  EXPECT_EQ(billed({"inv_0000000000000001", "inv_0000000000000002"}), ran_in_all());
  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000002"}, kLater));

  // Voided and invoiced again, November stops where December already starts.
  ASSERT_TRUE(core.apply(VoidInvoice{"inv_0000000000000001"}, kLater));
  ASSERT_TRUE(draft_at("inv_0000000000000003", kNov, kLater));
  EXPECT_EQ(invoice("inv_0000000000000003").period_end_ms, mid_);
  EXPECT_EQ(billed({"inv_0000000000000003", "inv_0000000000000002"}), ran_in_all());
}

TEST_F(EarlyInvoice, ADraftReadBeforeTheMonthEndedIsReDraftedBeforeItIsFinal) {
  ASSERT_TRUE(draft_at("inv_0000000000000001", kNov, mid_));
  EXPECT_EQ(rejection(FinalizeInvoice{"inv_0000000000000001"}), ErrorCode::kConflict);
  ASSERT_TRUE(draft_at("inv_0000000000000001", kNov, kLater));
  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000001"}, kLater));
  EXPECT_EQ(invoice("inv_0000000000000001").period_end_ms, kDec);
  ASSERT_TRUE(draft_at("inv_0000000000000002", kDec, kLater));
  EXPECT_EQ(invoice("inv_0000000000000002").period_start_ms, kDec);
  EXPECT_EQ(billed({"inv_0000000000000001", "inv_0000000000000002"}), ran_in_all());
}

TEST_F(InvoiceLifecycle, ADraftIsReplacedUntilFinalThenFrozenAndNumbered) {
  ASSERT_TRUE(draft_for("inv_0000000000000001", kTenant, kNov, 30 * kUnit));
  EXPECT_EQ(invoice("inv_0000000000000001").subtotal_micros, 100 * kUnit);
  EXPECT_EQ(invoice("inv_0000000000000001").total_micros, 70 * kUnit);
  // More use shows up in a re-draft, under the same id: still one invoice for the month.
  core.restore(std::vector<Row>{ran("ins_02", kTenant, kVision, 1, 0, at("2026-11-03T00:00:00Z"),
                                    at("2026-11-03T00:00:50Z"))});
  ASSERT_TRUE(draft_for("inv_0000000000000002", kTenant, kNov));
  EXPECT_EQ(core.state().invoices.size(), 1u);
  EXPECT_EQ(invoice("inv_0000000000000001").subtotal_micros, 150 * kUnit);

  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000001"}, kLater));
  EXPECT_EQ(invoice("inv_0000000000000001").number, "INV-000001");
  EXPECT_EQ(rejection(FinalizeInvoice{"inv_0000000000000001"}), ErrorCode::kConflict);
  auto redraft = draft_month(core.state(), kTenant, kNov, kLater, 0);
  redraft->id = "inv_0000000000000003";
  EXPECT_EQ(rejection(*redraft), ErrorCode::kConflict);
  EXPECT_EQ(rejection(VoidInvoice{"inv_0000000000000009"}), ErrorCode::kNotFound);

  // A void final invoice keeps its number; the month may then be invoiced again, numbered next.
  ASSERT_TRUE(core.apply(VoidInvoice{"inv_0000000000000001"}, kLater));
  EXPECT_EQ(invoice("inv_0000000000000001").number, "INV-000001");
  EXPECT_EQ(rejection(VoidInvoice{"inv_0000000000000001"}), ErrorCode::kConflict);
  ASSERT_TRUE(draft_for("inv_0000000000000004", kTenant, kNov));
  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000004"}, kLater));
  EXPECT_EQ(invoice("inv_0000000000000004").number, "INV-000002");
}

TEST_F(InvoiceLifecycle, PaidInvoicesCannotBeVoidedAndCreditNotesStayWithinTheTotal) {
  ASSERT_TRUE(draft_for("inv_0000000000000001", kTenant, kNov));
  EXPECT_EQ(rejection(MarkInvoicePaid{"inv_0000000000000001"}), ErrorCode::kConflict);
  EXPECT_EQ(rejection(CreateCreditNote{"crn_0000000000000001", "inv_0000000000000001", kUnit, "x"}),
            ErrorCode::kConflict);
  ASSERT_TRUE(core.apply(FinalizeInvoice{"inv_0000000000000001"}, kLater));
  for (int64_t bad : {int64_t{0}, -kUnit, 100 * kUnit + 1}) {
    EXPECT_EQ(rejection(CreateCreditNote{"crn_0000000000000001", "inv_0000000000000001", bad,
                                         "goodwill"}),
              ErrorCode::kInvalidArgument)
        << bad;
  }
  ASSERT_TRUE(core.apply(
      CreateCreditNote{"crn_0000000000000001", "inv_0000000000000001", 60 * kUnit, "outage"},
      kLater));
  EXPECT_EQ(invoice("inv_0000000000000001").due_micros(), 40 * kUnit);
  EXPECT_EQ(rejection(VoidInvoice{"inv_0000000000000001"}), ErrorCode::kConflict);
  EXPECT_EQ(rejection(CreateCreditNote{"crn_0000000000000002", "inv_0000000000000001",
                                       40 * kUnit + 1, "more"}),
            ErrorCode::kInvalidArgument);
  // The refusal speaks in money, as the invoice does.
  const std::string message =
      core.apply(CreateCreditNote{"crn_0000000000000002", "inv_0000000000000001", 40 * kUnit + 1,
                                  "more"},
                 kLater)
          .error()
          .message;
  EXPECT_NE(message.find("INV-000001: 40.000000 (asked: 40.000001)"), std::string::npos) << message;
  ASSERT_TRUE(core.apply(MarkInvoicePaid{"inv_0000000000000001"}, kLater));
  EXPECT_EQ(rejection(VoidInvoice{"inv_0000000000000001"}), ErrorCode::kConflict);
  ASSERT_TRUE(core.apply(
      CreateCreditNote{"crn_0000000000000002", "inv_0000000000000001", 40 * kUnit, "refund"},
      kLater));
  EXPECT_EQ(core.state().credit_notes.at("crn_0000000000000002").number, "CN-000002");
  EXPECT_EQ(invoice("inv_0000000000000001").due_micros(), 0);
}

TEST_F(InvoiceLifecycle, RefusesBadDrafts) {
  // A month that has not begun, and credits beyond the subtotal.
  auto future = draft_month(core.state(), kTenant, kDec, kLater, 0);
  future->id = "inv_0000000000000001";
  EXPECT_EQ(core.apply(*future, kNov).error().code, ErrorCode::kInvalidArgument);
  // The drafter applies no more credit than the month's charges; the core refuses more anyway.
  auto generous = draft_month(core.state(), kTenant, kNov, kLater, 1'000'000 * kUnit);
  int64_t subtotal = 0;
  for (const InvoiceLine& line : generous->lines) subtotal += line.amount_micros;
  EXPECT_EQ(generous->credits_micros, subtotal);
  generous->id = "inv_0000000000000001";
  generous->credits_micros = subtotal + 1;
  EXPECT_EQ(rejection(*generous), ErrorCode::kInvalidArgument);
  auto bad_id = draft_month(core.state(), kTenant, kNov, kLater, 0);
  bad_id->id = "invoice-1";
  EXPECT_EQ(rejection(*bad_id), ErrorCode::kInvalidId);
}

}  // namespace
}  // namespace allot::billing
