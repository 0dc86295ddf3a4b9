// The balancer's choices, the traffic the autoscaler reads and the callers' use the meter counts,
// without a network.
#include "api/service_traffic.h"

#include <gtest/gtest.h>

#include "api/service_proxy.h"

namespace allot {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;

class ServiceTrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    traffic.publish(ServiceRoute{.id = "svc_1", .tenant_id = "ten_a", .name = "chat"},
                    {Endpoint{.instance_id = "ins_1", .node_id = "nod_1", .port = 80},
                     Endpoint{.instance_id = "ins_2", .node_id = "nod_2", .port = 80},
                     Endpoint{.instance_id = "ins_3", .node_id = ""}},
                    "");
  }
  ServiceTraffic traffic;
};

TEST_F(ServiceTrafficTest, OnlyReadyReplicasAreChosenTheLeastBusyFirst) {
  EXPECT_FALSE(traffic.acquire("svc_1", {}));  // Nothing probed yet: nothing ready.
  auto due = traffic.due_probes(kT0, 1'000);
  ASSERT_EQ(due.size(), 2U);                            // Running replicas only.
  EXPECT_TRUE(traffic.due_probes(kT0, 1'000).empty());  // Each is being probed.
  traffic.record_probe("ins_1", true, "GET / answered 200", kT0);
  traffic.record_probe("ins_2", true, "GET / answered 200", kT0);
  const auto first = traffic.acquire("svc_1", {});
  ASSERT_TRUE(first);
  const auto second = traffic.acquire("svc_1", {});
  ASSERT_TRUE(second);
  EXPECT_NE(first->instance_id, second->instance_id);  // The idle one, not the busy one.
  EXPECT_EQ(traffic.stats("svc_1").in_flight, 2);
  traffic.release("svc_1", first->instance_id, false);
  traffic.release("svc_1", second->instance_id, false);
  // Among equals, the one that has served least, so that one request after another goes round.
  std::set<std::string> seen;
  for (int i = 0; i < 4; ++i) {
    const auto e = traffic.acquire("svc_1", {});
    seen.insert(e->instance_id);
    traffic.release("svc_1", e->instance_id, false);
  }
  EXPECT_EQ(seen.size(), 2U);
  // One that could not be reached is out until a probe finds it ready again; `avoid` skips one.
  const auto failed = traffic.acquire("svc_1", {});
  traffic.release("svc_1", failed->instance_id, true);
  EXPECT_FALSE(traffic.health(failed->instance_id)->ready);
  const auto other = traffic.acquire("svc_1", {});
  ASSERT_TRUE(other);
  EXPECT_NE(other->instance_id, failed->instance_id);
  EXPECT_FALSE(traffic.acquire("svc_1", {other->instance_id}));
}

TEST_F(ServiceTrafficTest, ADrainingReplicaTakesNoNewRequests) {
  traffic.due_probes(kT0, 1'000);
  traffic.record_probe("ins_1", true, "", kT0);
  traffic.record_probe("ins_2", true, "", kT0);
  traffic.publish(ServiceRoute{.id = "svc_1", .tenant_id = "ten_a", .name = "chat"},
                  {Endpoint{.instance_id = "ins_1", .node_id = "nod_1", .draining = true},
                   Endpoint{.instance_id = "ins_2", .node_id = "nod_2"}},
                  "");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(traffic.acquire("svc_1", {})->instance_id, "ins_2");
  // Gone from the list: its health goes too.
  traffic.publish(ServiceRoute{.id = "svc_1", .tenant_id = "ten_a", .name = "chat"},
                  {Endpoint{.instance_id = "ins_2", .node_id = "nod_2"}}, "");
  EXPECT_FALSE(traffic.health("ins_1"));
}

TEST_F(ServiceTrafficTest, ServicesAreFoundByTheirTenantsOnly) {
  EXPECT_TRUE(traffic.find("ten_a", "chat"));
  EXPECT_TRUE(traffic.find("ten_a", "svc_1"));
  EXPECT_TRUE(traffic.find("", "svc_1"));  // An operator admin, by id.
  EXPECT_FALSE(traffic.find("", "chat"));
  EXPECT_FALSE(traffic.find("ten_b", "chat"));
  EXPECT_FALSE(traffic.find("ten_b", "svc_1"));
}

TEST_F(ServiceTrafficTest, RatesAreAveragedOverTheStableAndPanicWindows) {
  for (int s = 0; s < 6; ++s) {
    for (int i = 0; i < 12; ++i) traffic.arrive("svc_1", kT0 + TimeMs{s} * 1'000);
  }
  const TrafficStats stats = traffic.sample("svc_1", kT0 + 6'000);
  // Six whole seconds of 12 requests and the newest, begun: over the last 6 s, 60 requests; over
  // the 7 s measured so far (less than the stable window), 72.
  EXPECT_DOUBLE_EQ(stats.rps_panic, 10.0);
  EXPECT_DOUBLE_EQ(stats.rps_stable, 72.0 / 7);
  EXPECT_EQ(stats.last_request_ms, kT0 + 5'000);
}

TEST(ServicePathTest, ThePathNamesTheServiceAndWhatItsReplicaIsAsked) {
  auto p = parse_service_path("/s/chat/v1/x?y=1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->key, "chat");
  EXPECT_EQ(p->target, "/v1/x?y=1");
  EXPECT_FALSE(p->bare);
  p = parse_service_path("/s/chat?y=1");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->bare);
  EXPECT_EQ(p->target, "/?y=1");
  EXPECT_FALSE(parse_service_path("/s/"));
  EXPECT_FALSE(parse_service_path("/s//x"));
  EXPECT_TRUE(request_model(R"({"model": "m", "messages": []})"));
  EXPECT_FALSE(request_model(R"({"model": ""})"));
  EXPECT_FALSE(request_model("not json"));
  EXPECT_TRUE(is_model_path("/v1/chat/completions"));
  EXPECT_FALSE(is_model_path("/v1/instances"));
}

TEST(ServicePathTest, AModelsPathNamesItsModelSlashesEscapedOrNot) {
  EXPECT_EQ(model_in_path("/v1/models/echo-1"), "echo-1");
  EXPECT_EQ(model_in_path("/v1/models/meta-llama/Llama-3-8B"), "meta-llama/Llama-3-8B");
  EXPECT_EQ(model_in_path("/v1/models/meta-llama%2FLlama-3-8B?x=1"), "meta-llama/Llama-3-8B");
  EXPECT_EQ(model_in_path("/v1/models"), std::nullopt);
  EXPECT_EQ(model_in_path("/v1/models/"), std::nullopt);
  EXPECT_EQ(model_in_path("/v1/instances/x"), std::nullopt);
  EXPECT_EQ(model_in_path("/v1/models/%zz"), std::nullopt);
}

TEST(ServiceMeter, CountsAddUpPerCallerAndServiceAndATakeEmptiesThem) {
  ServiceMeter meter;
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_b", .requests = 1, .tokens = 5});
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_b", .requests = 1, .tokens = 7});
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_c", .malformed = 1});
  std::vector<ServiceUseCount> taken = meter.take();
  ASSERT_EQ(taken.size(), 2U);
  EXPECT_EQ(taken[0].caller_tenant_id, "ten_b");
  EXPECT_EQ(taken[0].requests, 2);
  EXPECT_EQ(taken[0].tokens, 12);
  EXPECT_EQ(taken[1].malformed, 1);
  EXPECT_TRUE(meter.take().empty());
  // Counts that could not be recorded go with the next take.
  meter.give_back(taken);
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_b", .requests = 1});
  taken = meter.take();
  ASSERT_EQ(taken.size(), 2U);
  EXPECT_EQ(taken[0].requests, 3);
}

TEST(ServiceMeter, ACallerNotKnownYetMayHoldForOneCallAtATime) {
  ServiceMeter meter;
  EXPECT_TRUE(meter.hold("ten_b", 100));
  EXPECT_FALSE(meter.hold("ten_b", 100));
  meter.release("ten_b", 100);
  EXPECT_TRUE(meter.hold("ten_b", 100));
}

TEST(ServiceMeter, FortyCallsAtOnceWithMoneyForOneAdmitOneAndOweAtMostItsWorth) {
  ServiceMeter meter;
  meter.set_spendable({{"ten_b", 1'000'000}, {"ten_c", 5}});  // 1.00, and 5 micros.
  int admitted = 0;
  for (int i = 0; i < 40; ++i) admitted += meter.hold("ten_b", 100'000'000) ? 1 : 0;  // 100 each.
  EXPECT_EQ(admitted, 1);
  EXPECT_TRUE(meter.hold("ten_c", 1));  // Another caller's money is its own.
  // Answered: what it costs is counted until the controller records it and reads the money again.
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_b", .requests = 1}, 100'000'000);
  meter.release("ten_b", 100'000'000);
  EXPECT_FALSE(meter.hold("ten_b", 1));
  (void)meter.take();
  EXPECT_FALSE(meter.hold("ten_b", 1));  // Being recorded: still spent.
  meter.set_spendable({{"ten_b", 0}});
  EXPECT_FALSE(meter.hold("ten_b", 1));
  meter.set_spendable({{"ten_b", 5'000'000}});  // Topped up.
  EXPECT_TRUE(meter.hold("ten_b", 1));
}

TEST(ServiceMeter, CountsGivenBackKeepTheirCharge) {
  ServiceMeter meter;
  meter.set_spendable({{"ten_b", 10}});
  meter.count({.service_id = "svc_a", .caller_tenant_id = "ten_b", .requests = 1}, 10);
  const auto taken = meter.take();
  meter.give_back(taken);
  meter.set_spendable({{"ten_b", 10}});  // Read before the counts were recorded.
  EXPECT_FALSE(meter.hold("ten_b", 1));
}

TEST(ServiceMeter, ACallsBoundIsItsPriceAndItsMostTokens) {
  EXPECT_EQ(call_bound_micros(1'000, 0, "anything"), 1'000);
  // 20 bytes of prompt and max_tokens 100: 120 tokens at 0.5 per 1,000, rounded up.
  const std::string body = R"({"max_tokens":100}  )";
  ASSERT_EQ(body.size(), 20U);
  EXPECT_EQ(call_bound_micros(1'000, 500'000, body), 1'000 + 60'000);
  // Without a max, the default completion bound.
  EXPECT_EQ(call_bound_micros(0, 1'000, "{}"), (2 + kDefaultCompletionBound) * 1'000 / 1'000);
  EXPECT_EQ(call_bound_micros(INT64_MAX, INT64_MAX, "{}"), INT64_MAX);
}

}  // namespace
}  // namespace allot
