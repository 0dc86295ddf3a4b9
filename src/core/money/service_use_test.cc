// Callers' use of shared services in the core: rows per caller and hour at the service's prices,
// charges exact to the micro, paid from the caller's own account only as far as it goes (never
// from its promotional credits), the rest owed and invoiced; bad reports change nothing.
#include "core/money/service_use.h"

#include <algorithm>
#include <variant>

#include "core/cluster/services.h"
#include "core/money/money.h"
#include "core/test_core.h"
#include "reports/invoice_draft.h"
#include "reports/service_margin.h"

namespace allot {
namespace {

const std::string kService = "svc_0000000000000001";

HostedService priced_service() {
  return HostedService{
      .id = kService,
      .tenant_id = kTenantA,
      .project_id = kProjectA,
      .user_id = "usr_1",
      .name = "chat",
      .min_replicas = 1,
      .max_replicas = 1,
      .shared = true,
      .price_per_request_micros = 1'000,    // 0.001
      .price_per_1k_tokens_micros = 2'500,  // 0.0025: tokens round down to the micro
      .revisions = {ServiceRevision{.spec = InstanceSpec{.gpus = 1,
                                                         .command = {"serve"},
                                                         .interactive = true,
                                                         .ports = {PublishedPort{.port = 8000}}},
                                    .port = 8000}}};
}

class ServiceUseTest : public CoreTest {
 protected:
  void SetUp() override {
    two_tenants();
    ok(CreateService{priced_service()});
    ok(SetBilling{kTenantB, BillingMode::kPrepaid});
    ok(Topup{.id = "pay-1", .tenant_id = kTenantB, .amount_micros = kUnit});
  }

  Rows use(int64_t requests, int64_t tokens, TimeMs at = kT0) {
    return ok(RecordServiceUse{{ServiceUseCount{.service_id = kService,
                                                .caller_tenant_id = kTenantB,
                                                .requests = requests,
                                                .tokens = tokens}}},
              at);
  }
  int64_t cash(const std::string& tenant) {
    return balance_of(core.state(), tenant, kT0)->cash_micros;
  }
  int64_t earned() {
    const ledger::Account* a = core.state().ledger.account(earnings_account(kTenantA));
    return a == nullptr ? 0 : a->credit_balance();
  }
  void expect_ledger_sums_to_zero() {
    const auto sums = core.state().ledger.sums();
    EXPECT_TRUE(sums.posted == 0 && sums.pending == 0);
  }
};

TEST_F(ServiceUseTest, UseIsChargedExactlyFromTheCallersBalanceToTheOwnersEarnings) {
  use(3, 999);  // 0.003 + floor(999 x 2500 / 1000) = 3000 + 2497
  use(1, 1);    // The hour's row: 4 requests, 1000 tokens = 4000 + 2500
  ASSERT_EQ(core.state().service_usage.size(), 1U);
  const ServiceUsage& row = core.state().service_usage.begin()->second;
  EXPECT_EQ(row.requests, 4);
  EXPECT_EQ(row.tokens, 1'000);
  EXPECT_EQ(row.charged_micros, 6'500);
  EXPECT_EQ(row.paid_micros, 6'500);
  EXPECT_EQ(cash(kTenantB), kUnit - 6'500);
  EXPECT_EQ(earned(), 6'500);
  // The owner's own account is not its earnings: they cannot pay for its GPUs.
  EXPECT_EQ(cash(kTenantA), 0);
  expect_ledger_sums_to_zero();

  // The next hour, at a new price: a row of its own.
  ok(UpdateService{.id = kService, .price_per_request_micros = 2'000});
  use(1, 0, kT0 + 3'600'000);
  EXPECT_EQ(core.state().service_usage.size(), 2U);

  auto invoice = billing::draft_month(core.state(), kTenantB, month_start(kT0), kT0 + 4'000'000, 0);
  ASSERT_TRUE(invoice) << invoice.error().message;
  ASSERT_EQ(invoice->lines.size(), 2U);
  EXPECT_EQ(invoice->lines[0].service_id, kService);
  EXPECT_EQ(invoice->lines[0].requests, 4);
  EXPECT_EQ(invoice->lines[0].tokens, 1'000);
  EXPECT_EQ(invoice->lines[0].amount_micros, 6'500);
  EXPECT_EQ(invoice->lines[1].amount_micros, 2'000);
  EXPECT_EQ(invoice->payments.paid_micros, 8'500);
  EXPECT_GE(invoice->payments.transfers, 3);

  auto margin = billing::service_margin(core.state(), *core.state().service(kService),
                                        month_start(kT0), kT0 + 4'000'000, kT0 + 4'000'000);
  ASSERT_TRUE(margin);
  EXPECT_EQ(margin->total.charged_micros, 8'500);
  ASSERT_EQ(margin->callers.size(), 1U);
  EXPECT_EQ(margin->callers[0].tenant_id, kTenantB);
  EXPECT_EQ(margin->margin_micros, 8'500);  // No replica ran.
}

TEST_F(ServiceUseTest, WhatTheBalanceCannotPayIsOwedAndCreditsNeverPay) {
  ok(Topup{.id = "promo", .tenant_id = kTenantB, .amount_micros = 50 * kUnit, .credit = true});
  use(1'000, 0);  // 1.000 exactly: the whole balance.
  use(500, 0);    // 0.500 more, with nothing left of its own.
  const ServiceUsage& row = core.state().service_usage.begin()->second;
  EXPECT_EQ(row.charged_micros, 1'500'000);
  EXPECT_EQ(row.paid_micros, kUnit);
  EXPECT_EQ(cash(kTenantB), 0);
  EXPECT_EQ(balance_of(core.state(), kTenantB, kT0)->credits_micros, 50 * kUnit);
  Draft draft(core.state());
  EXPECT_EQ(spendable_on_services(draft, *core.state().tenant(kTenantB), kT0), 0);
  auto invoice = billing::draft_month(core.state(), kTenantB, month_start(kT0), kT0 + 1'000, 0);
  ASSERT_TRUE(invoice);
  EXPECT_EQ(invoice->lines.at(0).amount_micros, 1'500'000);
  EXPECT_EQ(invoice->payments.paid_micros, kUnit);
  expect_ledger_sums_to_zero();
}

TEST_F(ServiceUseTest, BadReportsAreRefusedAndChangeNothing) {
  auto count = [](auto edit) {
    ServiceUseCount c{.service_id = kService, .caller_tenant_id = kTenantB, .requests = 1};
    edit(c);
    return RecordServiceUse{{c}};
  };
  EXPECT_EQ(refused(RecordServiceUse{}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(count([](ServiceUseCount& c) { c.requests = -1; })),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(count([](ServiceUseCount& c) { c.tokens = int64_t{1} << 62; })),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(count([](ServiceUseCount& c) { c.service_id = "svc_00000000000000ff"; })),
            ErrorCode::kNotFound);
  EXPECT_EQ(refused(count([](ServiceUseCount& c) { c.caller_tenant_id = "ten_00000000000000ff"; })),
            ErrorCode::kNotFound);
  // Its own tenant does not pay for its service.
  EXPECT_EQ(refused(count([](ServiceUseCount& c) { c.caller_tenant_id = kTenantA; })),
            ErrorCode::kInvalidArgument);
}

TEST_F(ServiceUseTest, OnlyASharedServiceTakesAnotherTenantsKey) {
  ServiceKey key{.id = "svk_0000000000000001",
                 .tenant_id = kTenantA,
                 .service_id = kService,
                 .caller_tenant_id = kTenantB,
                 .name = "app",
                 .token_hash = std::string(64, 'b')};
  ok(UpdateService{.id = kService, .shared = false});
  EXPECT_EQ(refused(CreateServiceKey{key}), ErrorCode::kNotFound);
  ok(UpdateService{.id = kService, .shared = true});
  ok(CreateServiceKey{key});
  EXPECT_TRUE(core.state().service_keys.at(key.id).billed());
  key.id = "svk_0000000000000002";
  key.token_hash = std::string(64, 'c');
  key.caller_tenant_id.clear();  // The service's own: not billed.
  ok(CreateServiceKey{key});
  EXPECT_FALSE(core.state().service_keys.at(key.id).billed());
  EXPECT_EQ(refused(UpdateService{.id = kService, .price_per_request_micros = -1}),
            ErrorCode::kInvalidArgument);
}

TEST_F(ServiceUseTest, ARiseReachesCallersOnlyAfterTheirNoticeAndAFallAtOnce) {
  ok(CreateServiceKey{ServiceKey{.id = "svk_0000000000000001",
                                 .tenant_id = kTenantA,
                                 .service_id = kService,
                                 .caller_tenant_id = kTenantB,
                                 .name = "app",
                                 .token_hash = std::string(64, 'b')}});
  const int64_t notice_ms = CoreOptions{}.service_price_notice_ms;
  ASSERT_EQ(notice_ms, 86'400'000);  // A day by default.
  const Rows rows = ok(UpdateService{.id = kService, .price_per_request_micros = 5'000'000'000});
  // The caller is told, with the time the rise reaches it.
  const auto told = std::ranges::find_if(rows, [](const Row& row) {
    return std::holds_alternative<Event>(row) &&
           std::get<Event>(row).kind == "service.price_rising";
  });
  ASSERT_NE(told, rows.end());
  EXPECT_EQ(std::get<Event>(*told).tenant_id, kTenantB);
  EXPECT_NE(std::get<Event>(*told).payload.find(R"("new_price_per_request":"5000.000000")"),
            std::string::npos)
      << std::get<Event>(*told).payload;
  // Until then, calls cost what they did.
  use(1, 0, kT0 + notice_ms - 1);
  EXPECT_EQ(cash(kTenantB), kUnit - 1'000);
  // From then on, the new price, which the caller cannot pay here: it is owed.
  use(1, 0, kT0 + notice_ms);
  EXPECT_EQ(cash(kTenantB), 0);
  // A fall is in force at once, and is told to nobody.
  const Rows fell =
      ok(UpdateService{.id = kService, .price_per_request_micros = 500}, kT0 + notice_ms + 1);
  EXPECT_FALSE(
      std::ranges::any_of(fell, [](const Row& row) { return std::holds_alternative<Event>(row); }));
  EXPECT_EQ(core.state().service(kService)->prices_at(kT0 + notice_ms + 1).first, 500);
  expect_ledger_sums_to_zero();
}

TEST_F(ServiceUseTest, AServiceWithoutCallersChangesItsPricesAtOnce) {
  const Rows rows = ok(UpdateService{.id = kService, .price_per_request_micros = 9'000});
  EXPECT_FALSE(
      std::ranges::any_of(rows, [](const Row& row) { return std::holds_alternative<Event>(row); }));
  EXPECT_EQ(core.state().service(kService)->prices_at(kT0).first, 9'000);
}

}  // namespace
}  // namespace allot
