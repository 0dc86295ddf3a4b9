// Budgets in the core: alerts once per threshold and month, enforcement, and refused settings.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/money/budgets.h"
#include "core/money/spend.h"
#include "core/test_core.h"

namespace allot {
namespace {

const std::string kBudget = "bud_0000000000000001";
const std::string kSecret = "0123456789abcdef0123";

class BudgetTest : public CoreTest {
 protected:
  void SetUp() override {
    two_tenants();
    ok(eight_gpu_join(kNode1, "h", "eu", "H100-80GB", kToken));
    ok(eight_gpu_join(kNode2, "a", "eu", "A100-80GB", kToken));
    ok(NodeHeartbeat{.node_id = kNode1});
    ok(NodeHeartbeat{.node_id = kNode2});
    // One GPU costs one unit a second, on both models.
    for (const char* model : {"H100-80GB", "A100-80GB"}) {
      ok(SetPrice{meter::Price{.key = {.model = model, .region = "eu"},
                               .gpu_hour_micros = 3'600 * kUnit}},
         kT0 - 60'000);
    }
  }

  // Creates an instance of `gpus` GPUs of `model` and, if it was placed, has its agent report it
  // running at `at`.
  std::string run(const std::string& project, int gpus, const std::string& model = "H100-80GB",
                  TimeMs at = kT0) {
    const std::string id = fmt::format("ins_{:016x}", ++next_);
    const std::string tenant = core.state().project(project)->tenant_id;
    ok(CreateInstance{.id = id,
                      .tenant_id = tenant,
                      .project_id = project,
                      .user_id = "usr_1",
                      .spec = {.gpus = gpus, .gpu_models = {model}, .command = {"true"}}},
       at);
    const Instance& created = *core.state().instance(id);
    if (created.state == InstanceState::kScheduled) {
      // The agent reports everything its node runs; what it leaves out the core takes as gone.
      NodeHeartbeat beat{.node_id = created.node_id};
      for (const auto& [other, i] : core.state().instances) {
        if (i.node_id == created.node_id && !is_final(i.state)) {
          beat.workloads.push_back({.instance_id = other, .state = WorkloadReportState::kRunning});
        }
      }
      ok(beat, at);
    }
    return id;
  }

  // The events among a command's rows.
  static std::vector<Event> events_in(const Rows& rows) {
    std::vector<Event> out;
    for (const Row& row : rows) {
      if (const auto* event = std::get_if<Event>(&row)) out.push_back(*event);
    }
    return out;
  }

  const Instance& instance(const std::string& id) { return *core.state().instance(id); }

  BudgetTest() : CoreTest(CoreOptions{.heartbeat_timeout_ms = 3'600'000'000}) {}

  int next_ = 0;
};

TEST_F(BudgetTest, EachThresholdAlertsOnceAMonthAndANewMonthRearmsIt) {
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .amount_micros = 10 * kUnit,
               .thresholds_pct = {50, 100},
               .webhook_url = "https://hooks.example.com/allot",
               .webhook_secret = kSecret});
  run(kProjectA, 1);
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 4'999)).empty());  // 4 units: under 50 %.
  const auto half = events_in(ok(Tick{}, kT0 + 5'000));
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].seq, 1);
  EXPECT_EQ(half[0].kind, "budget.threshold");
  EXPECT_EQ(half[0].tenant_id, kTenantA);
  EXPECT_EQ(half[0].webhook_url, "https://hooks.example.com/allot");
  EXPECT_EQ(half[0].webhook_budget_id, kBudget);
  EXPECT_NE(half[0].payload.find(R"("threshold_pct":50)"), std::string::npos) << half[0].payload;
  EXPECT_NE(half[0].payload.find(R"("spend":"5.000000")"), std::string::npos) << half[0].payload;
  EXPECT_NE(half[0].payload.find(R"("month":"2027-01")"), std::string::npos) << half[0].payload;
  EXPECT_TRUE(core.state().budget_alerts.contains(BudgetAlert::key_of(kBudget, "2027-01", 50)));
  // Still over 50 % a tick later: no second alert.
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 6'000)).empty());
  const auto full = events_in(ok(Tick{}, kT0 + 10'000));
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].seq, 2);
  EXPECT_NE(full[0].payload.find(R"("threshold_pct":100)"), std::string::npos);
  EXPECT_EQ(core.state().last_event_seq, 2);

  // A new month starts from zero: the same thresholds alert again once its spend reaches them.
  const TimeMs next = next_month_start(kT0);
  EXPECT_TRUE(events_in(ok(Tick{}, next + 4'000)).empty());
  const auto again = events_in(ok(Tick{}, next + 5'000));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].seq, 3);
  EXPECT_NE(again[0].payload.find(R"("month":"2027-02")"), std::string::npos);
  EXPECT_EQ(core.state().budget_alerts.size(), 3u);
}

TEST_F(BudgetTest, ChangingTheAmountRearmsItsThresholdsAgainstTheNewAmount) {
  const SetBudget ten{.id = kBudget,
                      .tenant_id = kTenantA,
                      .amount_micros = 10 * kUnit,
                      .thresholds_pct = {50, 100}};
  ok(ten);
  run(kProjectA, 1);                                         // One unit a second.
  ASSERT_EQ(events_in(ok(Tick{}, kT0 + 5'000)).size(), 1u);  // 50 % of 10.
  // Raised to 20: 50 % now means 10 units, not yet spent; it alerts again when they are.
  SetBudget twenty = ten;
  twenty.amount_micros = 20 * kUnit;
  ok(twenty, kT0 + 6'000);
  const Budget& b = core.state().budgets.at(kBudget);
  EXPECT_FALSE(alerted(core.state(), b, "2027-01", 50));
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 9'000)).empty());
  const auto half = events_in(ok(Tick{}, kT0 + 10'000));
  ASSERT_EQ(half.size(), 1u);
  EXPECT_NE(half[0].payload.find(R"("threshold_pct":50)"), std::string::npos) << half[0].payload;
  EXPECT_NE(half[0].payload.find(R"("amount":"20.000000")"), std::string::npos) << half[0].payload;
  EXPECT_TRUE(alerted(core.state(), core.state().budgets.at(kBudget), "2027-01", 50));
  ASSERT_EQ(events_in(ok(Tick{}, kT0 + 20'000)).size(), 1u);  // 100 % of 20.
  // Lowered below what was spent: every threshold it alerted for is still passed; none again.
  SetBudget eight = ten;
  eight.amount_micros = 8 * kUnit;
  ok(eight, kT0 + 21'000);
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 22'000)).empty());
}

TEST_F(BudgetTest, EveryEnforcementEmitsItsEventWhateverTheThresholds) {
  // Thresholds that stop short of the amount: the enforcement still says when it begins.
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .amount_micros = 3 * kUnit,
               .thresholds_pct = {50},
               .webhook_url = "https://hooks.example.com/allot",
               .webhook_secret = kSecret,
               .enforcement = Enforcement::kStopRunning});
  const std::string mine = run(kProjectA, 1);
  ok(Tick{}, kT0 + 2'000);  // 50 %.
  const auto stopped = events_in(ok(Tick{}, kT0 + 3'000));
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].kind, "budget.enforced");
  EXPECT_EQ(stopped[0].webhook_url, "https://hooks.example.com/allot");
  EXPECT_EQ(stopped[0].webhook_budget_id, kBudget);
  EXPECT_NE(stopped[0].payload.find(R"("enforcement":"stop_running")"), std::string::npos);
  EXPECT_NE(stopped[0].payload.find(R"("stopped":[")" + mine + R"("])"), std::string::npos)
      << stopped[0].payload;
  EXPECT_TRUE(instance(mine).stop_requested);
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 4'000)).empty());  // Once.

  // A block_new budget whose 100 % alert went out before it enforced: its enforcement is its own
  // event.
  const std::string budget_b = "bud_0000000000000002";
  ok(SetBudget{.id = budget_b,
               .tenant_id = kTenantB,
               .amount_micros = 2 * kUnit,
               .thresholds_pct = {100}},
     kT0 + 4'000);
  run(kProjectB, 1, "H100-80GB", kT0 + 4'000);
  ASSERT_EQ(events_in(ok(Tick{}, kT0 + 6'000)).size(), 1u);  // The 100 % alert.
  ok(SetBudget{.id = budget_b,
               .tenant_id = kTenantB,
               .amount_micros = 2 * kUnit,
               .thresholds_pct = {100},
               .enforcement = Enforcement::kBlockNew},
     kT0 + 7'000);
  const auto blocked = events_in(ok(Tick{}, kT0 + 7'000));
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0].kind, "budget.enforced");
  EXPECT_EQ(blocked[0].tenant_id, kTenantB);
  EXPECT_NE(blocked[0].payload.find(R"("enforcement":"block_new")"), std::string::npos);
  EXPECT_NE(blocked[0].payload.find(R"("stopped":[])"), std::string::npos) << blocked[0].payload;
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 8'000)).empty());
}

TEST_F(BudgetTest, SeveralThresholdsReachedAtOnceEachAlert) {
  ok(SetBudget{.id = kBudget, .tenant_id = kTenantA, .amount_micros = 2 * kUnit});
  run(kProjectA, 4);  // Four units a second.
  const auto events = events_in(ok(Tick{}, kT0 + 1'000));
  ASSERT_EQ(events.size(), 3u);  // 50, 80 and 100 % of 2 units: all within the first second.
  EXPECT_EQ(events[0].seq, 1);
  EXPECT_EQ(events[2].seq, 3);
  EXPECT_TRUE(events[0].webhook_url.empty());  // No webhook: logged only.
}

TEST_F(BudgetTest, ABlockNewBudgetRefusesNewWorkAndHoldsQueuedWork) {
  // Tenant B fills the A100 node; A's A100 work then queues for room.
  const std::string b_work = run(kProjectB, 8, "A100-80GB");
  run(kProjectA, 1);
  const std::string queued = run(kProjectA, 8, "A100-80GB", kT0 + 1'000);
  EXPECT_EQ(instance(queued).state, InstanceState::kQueued);
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .amount_micros = 3 * kUnit,
               .enforcement = Enforcement::kBlockNew},
     kT0 + 2'000);
  // Under the amount, new work is still taken.
  const std::string before = run(kProjectA, 1, "H100-80GB", kT0 + 2'000);
  EXPECT_EQ(instance(before).state, InstanceState::kRunning);
  // At +3 s the first instance alone has spent 3 units: the amount.
  EXPECT_EQ(refused(CreateInstance{.id = "ins_00000000000000ff",
                                   .tenant_id = kTenantA,
                                   .project_id = kProjectA2,
                                   .user_id = "usr_1",
                                   .spec = {.gpus = 1, .command = {"true"}}},
                    kT0 + 3'000),
            ErrorCode::kBudgetExceeded);
  // Room frees up, but the queued instance waits for the budget, saying so.
  ok(NodeHeartbeat{.node_id = kNode2,
                   .workloads = {{.instance_id = b_work,
                                  .state = WorkloadReportState::kExited,
                                  .exit_code = 0}}},
     kT0 + 3'000);
  ASSERT_TRUE(is_final(instance(b_work).state));
  ok(Tick{}, kT0 + 3'500);
  EXPECT_EQ(instance(queued).state, InstanceState::kQueued);
  EXPECT_TRUE(instance(queued).reason.starts_with("waits: budget " + kBudget))
      << instance(queued).reason;
  // Running work goes on under block_new; other tenants are not held.
  EXPECT_EQ(instance(before).state, InstanceState::kRunning);
  EXPECT_EQ(instance(run(kProjectB, 1, "H100-80GB", kT0 + 3'500)).state, InstanceState::kRunning);
  // Without the budget, the queued work starts at the next pass.
  ok(DeleteBudget{kBudget}, kT0 + 4'000);
  ok(Tick{}, kT0 + 4'000);
  EXPECT_EQ(instance(queued).state, InstanceState::kScheduled);
}

TEST_F(BudgetTest, AStopRunningBudgetStopsTheTenantsRunningWorkWhenSpent) {
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .amount_micros = 3 * kUnit,
               .enforcement = Enforcement::kStopRunning});
  const std::string mine = run(kProjectA, 1);
  const std::string other = run(kProjectB, 1);
  ok(Tick{}, kT0 + 2'999);
  EXPECT_FALSE(instance(mine).stop_requested);
  ok(Tick{}, kT0 + 3'000);
  EXPECT_TRUE(instance(mine).stop_requested);
  EXPECT_NE(instance(mine).events.back().message.find("budget " + kBudget + " reached"),
            std::string::npos);
  EXPECT_FALSE(instance(other).stop_requested);
  // Asked once: later ticks add nothing to it.
  const size_t events = instance(mine).events.size();
  ok(Tick{}, kT0 + 4'000);
  EXPECT_EQ(instance(mine).events.size(), events);
}

TEST_F(BudgetTest, AProjectBudgetCountsOnlyItsProjectsSpend) {
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .project_id = kProjectA2,
               .amount_micros = 4 * kUnit,
               .enforcement = Enforcement::kStopRunning});
  const std::string one = run(kProjectA, 2);
  const std::string two = run(kProjectA2, 1);
  const TenantSpend spend = month_spend(core.state(), kTenantA, kT0 + 3'000);
  EXPECT_EQ(spend.total_micros, 9 * kUnit);
  EXPECT_EQ(spend.of(kProjectA), 6 * kUnit);
  EXPECT_EQ(spend.of(kProjectA2), 3 * kUnit);
  EXPECT_EQ(spend.of(""), 9 * kUnit);
  ok(Tick{}, kT0 + 3'000);
  EXPECT_FALSE(instance(two).stop_requested);  // 3 of 4: the project is under its amount.
  ok(Tick{}, kT0 + 4'000);
  EXPECT_TRUE(instance(two).stop_requested);
  EXPECT_FALSE(instance(one).stop_requested);  // Another project of the same tenant.
  // Project one may still start work; project two may not.
  EXPECT_EQ(instance(run(kProjectA, 1, "H100-80GB", kT0 + 4'000)).state, InstanceState::kRunning);
  EXPECT_FALSE(budget_blocks(core.state(), kTenantA, kProjectA, kT0 + 4'000));
  EXPECT_TRUE(budget_blocks(core.state(), kTenantA, kProjectA2, kT0 + 4'000));
}

TEST_F(BudgetTest, SettingTheSameScopeAgainReplacesTheBudget) {
  ok(SetBudget{.id = kBudget, .tenant_id = kTenantA, .amount_micros = 5 * kUnit});
  ok(SetBudget{.id = "bud_0000000000000002",
               .tenant_id = kTenantA,
               .amount_micros = 7 * kUnit,
               .thresholds_pct = {90},
               .enforcement = Enforcement::kBlockNew});
  ASSERT_EQ(core.state().budgets.size(), 1u);
  const Budget& b = core.state().budgets.at(kBudget);
  EXPECT_EQ(b.amount_micros, 7 * kUnit);
  EXPECT_EQ(b.thresholds_pct, std::vector<int64_t>{90});
  EXPECT_EQ(b.enforcement, Enforcement::kBlockNew);
  // A project's budget is a scope of its own.
  ok(SetBudget{.id = "bud_0000000000000003",
               .tenant_id = kTenantA,
               .project_id = kProjectA,
               .amount_micros = kUnit});
  EXPECT_EQ(core.state().budgets.size(), 2u);
  ok(DeleteBudget{kBudget}, kT0 + 1);
  EXPECT_FALSE(core.state().budgets.at(kBudget).live());
  EXPECT_EQ(refused(DeleteBudget{kBudget}), ErrorCode::kNotFound);
}

TEST_F(BudgetTest, BadSettingsAreRefusedWithStableCodesAndChangeNothing) {
  const SetBudget good{.id = kBudget, .tenant_id = kTenantA, .amount_micros = kUnit};
  auto with = [&](auto change) {
    SetBudget c = good;
    change(c);
    return refused(c);
  };
  using E = ErrorCode;
  EXPECT_EQ(with([](SetBudget& c) { c.amount_micros = 0; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.amount_micros = -1; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.amount_micros = INT64_MIN; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {}; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {0, 50}; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {50, 1001}; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {80, 50}; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {50, 50}; }), E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.thresholds_pct = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; }),
            E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.tenant_id = "ten_00000000000000ff"; }), E::kNotFound);
  EXPECT_EQ(with([](SetBudget& c) { c.project_id = kProjectB; }), E::kNotFound);  // B's project.
  EXPECT_EQ(with([](SetBudget& c) { c.project_id = "prj_00000000000000ff"; }), E::kNotFound);
  EXPECT_EQ(with([](SetBudget& c) { c.id = "quo_0000000000000001"; }), E::kInvalidId);
  for (const char* url : {"ftp://hooks.example.com/", "hooks.example.com", "http://",
                          "http:///path", "https://hooks example.com/", "javascript:alert(1)"}) {
    EXPECT_EQ(with([&](SetBudget& c) {
                c.webhook_url = url;
                c.webhook_secret = kSecret;
              }),
              E::kInvalidArgument)
        << url;
  }
  EXPECT_EQ(with([](SetBudget& c) {
              c.webhook_url = "http://127.0.0.1:9/hook";
              c.webhook_secret = "short";
            }),
            E::kInvalidArgument);
  EXPECT_EQ(with([](SetBudget& c) { c.webhook_secret = kSecret; }), E::kInvalidArgument);
  EXPECT_TRUE(core.state().budgets.empty());
  // The largest amount and threshold are taken and compared without overflow.
  ok(SetBudget{.id = kBudget,
               .tenant_id = kTenantA,
               .amount_micros = INT64_MAX,
               .thresholds_pct = {1, 1000},
               .webhook_url = "http://127.0.0.1:9/hook",
               .webhook_secret = kSecret});
  run(kProjectA, 8);
  EXPECT_TRUE(events_in(ok(Tick{}, kT0 + 60'000)).empty());
}

TEST_F(BudgetTest, SpendCountsOnlyThisMonthOfWorkThatSpansMonths) {
  const TimeMs start = next_month_start(kT0) - 10'000;  // Ten seconds before February.
  const std::string id = run(kProjectA, 1, "H100-80GB", start);
  ok(StopInstance{id}, start + 15'000);
  const Instance& stopping = instance(id);
  ok(
      NodeHeartbeat{
          .node_id = stopping.node_id,
          .workloads = {{.instance_id = id, .state = WorkloadReportState::kExited, .signal = 15}}},
      start + 15'000);
  ASSERT_TRUE(is_final(instance(id).state));
  EXPECT_EQ(month_spend(core.state(), kTenantA, start + 9'000).total_micros, 9 * kUnit);
  EXPECT_EQ(month_spend(core.state(), kTenantA, start + 60'000).total_micros, 5 * kUnit);
  // A month later it is history.
  EXPECT_EQ(month_spend(core.state(), kTenantA, next_month_start(start + 60'000)).total_micros, 0);
}

}  // namespace
}  // namespace allot
