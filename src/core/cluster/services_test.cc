// Services in the core: what a service, its revisions and its keys may be, what a replica may be,
// and the index of live replicas.
#include "core/cluster/services.h"

#include "core/test_core.h"

namespace allot {
namespace {

const std::string kService = "svc_0000000000000001";

HostedService valid_service() {
  return HostedService{
      .id = kService,
      .tenant_id = kTenantA,
      .project_id = kProjectA,
      .user_id = "usr_1",
      .name = "chat",
      .model = "llama-3-8b",
      .min_replicas = 1,
      .max_replicas = 4,
      .target_rps = 20,
      .scale_to_zero_after_ms = 600'000,
      .revisions = {ServiceRevision{.spec = InstanceSpec{.gpus = 1,
                                                         .command = {"serve"},
                                                         .interactive = true,
                                                         .ports = {PublishedPort{.port = 8000}}},
                                    .port = 8000,
                                    .readiness = "/health"}}};
}

class ServicesCoreTest : public CoreTest {
 protected:
  void SetUp() override {
    two_tenants();
    for (const Command& c : free_prices("eu", kT0 - 1)) ok(c, kT0 - 1);
    ok(CreateService{valid_service()});
  }
  const HostedService& service() const { return *core.state().service(kService); }
};

TEST_F(ServicesCoreTest, ANewServiceRollsOutItsFirstRevisionAtItsMinimum) {
  EXPECT_EQ(service().revision, 1);
  EXPECT_EQ(service().serving_revision, 0);
  EXPECT_EQ(service().rollout, kRolloutRolling);
  EXPECT_EQ(service().desired, 1);
  EXPECT_EQ(service().revisions.front().number, 1);
  EXPECT_EQ(service_named(core.state(), kTenantA, "chat"), &service());
  EXPECT_EQ(service_for_model(core.state(), kTenantA, "llama-3-8b"), &service());
  EXPECT_EQ(service_for_model(core.state(), kTenantB, "llama-3-8b"), nullptr);
}

TEST_F(ServicesCoreTest, BadServicesAreRefusedAndChangeNothing) {
  HostedService fresh = valid_service();
  fresh.id = "svc_0000000000000002";
  fresh.name = "other";
  fresh.model = "";
  expect_refused<HostedService>(
      fresh,
      {{"bad id", [](HostedService& s) { s.id = "svc_1"; }, ErrorCode::kInvalidId},
       {"taken name", [](HostedService& s) { s.name = "chat"; }, ErrorCode::kAlreadyExists},
       {"taken model", [](HostedService& s) { s.model = "llama-3-8b"; }, ErrorCode::kAlreadyExists},
       {"another tenant's project", [](HostedService& s) { s.project_id = kProjectB; },
        ErrorCode::kNotFound},
       {"bad name", [](HostedService& s) { s.name = "Chat Bot"; }},
       {"model with a space", [](HostedService& s) { s.model = "a b"; }},
       {"min above max", [](HostedService& s) { s.min_replicas = 5; }},
       {"no max", [](HostedService& s) { s.max_replicas = 0; }},
       {"too many", [](HostedService& s) { s.max_replicas = 65; }},
       {"both targets", [](HostedService& s) { s.target_concurrency = 2; }},
       {"zero too soon", [](HostedService& s) { s.scale_to_zero_after_ms = 5'000; }},
       {"no port", [](HostedService& s) { s.revisions[0].port = 0; }},
       {"relative readiness", [](HostedService& s) { s.revisions[0].readiness = "health"; }},
       {"a gang", [](HostedService& s) { s.revisions[0].spec.nodes = 2; }},
       {"a job", [](HostedService& s) { s.revisions[0].spec.interactive = false; }},
       {"no command", [](HostedService& s) { s.revisions[0].spec.command.clear(); }},
       {"two revisions", [](HostedService& s) { s.revisions.push_back(s.revisions[0]); }}},
      [](HostedService s) { return CreateService{std::move(s)}; });
}

TEST_F(ServicesCoreTest, ANewRevisionRollsOutAndTheServingOneIsKept) {
  ServiceRevision next = service().revisions.front();
  // The same revision again changes nothing.
  EXPECT_TRUE(ok(UpdateService{.id = kService, .revision = next}).empty());
  for (int i = 0; i < 12; ++i) {
    if (i == 1) {
      ok(RecordServiceRollout{
          .id = kService, .revision = 2, .rollout = std::string(kRolloutDone), .reason = "ok"});
    }
    next.spec.env["V"] = std::to_string(i);
    ok(UpdateService{.id = kService, .revision = next});
  }
  EXPECT_EQ(service().revision, 13);
  EXPECT_EQ(service().serving_revision, 2);
  EXPECT_EQ(service().revisions.size(), limits::kServiceRevisionsKept);
  EXPECT_NE(service().revision_of(2), nullptr);  // Serving: kept while older ones go.
  EXPECT_EQ(service().revision_of(3), nullptr);
  EXPECT_EQ(service().rollout, kRolloutRolling);
  ok(RecordServiceRollout{
      .id = kService, .revision = 13, .rollout = std::string(kRolloutFailed), .reason = "boom"});
  EXPECT_EQ(service().rollout, kRolloutFailed);
  EXPECT_EQ(service().rollout_reason, "boom");
  EXPECT_EQ(refused(RecordServiceRollout{.id = kService, .revision = 13, .rollout = "maybe"}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(RecordServiceRollout{.id = kService, .revision = 3, .rollout = "done"}),
            ErrorCode::kNotFound);
}

TEST_F(ServicesCoreTest, ScalingStaysWithinTheRangeOrAtZero) {
  ok(ScaleService{.id = kService, .desired = 4, .reason = "busy"});
  EXPECT_EQ(service().desired, 4);
  ok(ScaleService{.id = kService, .desired = 0, .reason = "quiet"});
  EXPECT_EQ(service().desired, 0);
  EXPECT_EQ(refused(ScaleService{.id = kService, .desired = 5}), ErrorCode::kInvalidArgument);
  // A smaller range pulls `desired` into it.
  ok(ScaleService{.id = kService, .desired = 4});
  ok(UpdateService{.id = kService, .max_replicas = 2});
  EXPECT_EQ(service().desired, 2);
  // Without scale to zero, 0 is no longer allowed.
  ok(UpdateService{.id = kService, .scale_to_zero_after_ms = 0});
  EXPECT_EQ(refused(ScaleService{.id = kService, .desired = 0}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(UpdateService{.id = kService, .min_replicas = 3}), ErrorCode::kInvalidArgument);
}

TEST_F(ServicesCoreTest, ReplicasAreTheirServicesInstancesAndAreIndexedWhileLive) {
  InstanceSpec spec = service().revisions.front().spec;
  spec.service_id = kService;
  spec.service_revision = 1;
  const std::string replica = launch(kTenantA, spec);
  EXPECT_EQ(live_replicas(core.state(), kService).size(), 1U);
  // Another tenant cannot make a replica of it, nor of a revision it does not have.
  EXPECT_EQ(refused(CreateInstance{next_id(), kTenantB, kProjectB, "usr_2", spec}),
            ErrorCode::kNotFound);
  InstanceSpec unknown = spec;
  unknown.service_revision = 7;
  EXPECT_EQ(refused(CreateInstance{next_id(), kTenantA, kProjectA, "usr_1", unknown}),
            ErrorCode::kInvalidArgument);
  ok(StopInstance{.id = replica});
  EXPECT_TRUE(live_replicas(core.state(), kService).empty());
  // A deleted service takes no replicas, and its name is free again.
  ok(DeleteService{.id = kService});
  EXPECT_EQ(refused(CreateInstance{next_id(), kTenantA, kProjectA, "usr_1", spec}),
            ErrorCode::kNotFound);
  EXPECT_EQ(service_named(core.state(), kTenantA, "chat"), nullptr);
  HostedService again = valid_service();
  again.id = "svc_0000000000000002";
  ok(CreateService{again});
}

TEST_F(ServicesCoreTest, KeysBelongToOneServiceOfTheTenant) {
  const ServiceKey key{.id = "svk_0000000000000001",
                       .tenant_id = kTenantA,
                       .service_id = kService,
                       .name = "acme",
                       .prefix = "allot_svc_ab",
                       .token_hash = std::string(64, 'b')};
  ok(CreateServiceKey{key});
  expect_refused<ServiceKey>(
      key,
      {{"taken id", [](ServiceKey&) {}, ErrorCode::kAlreadyExists},
       {"another tenant", [](ServiceKey& k) { k.tenant_id = kTenantB; }, ErrorCode::kNotFound},
       {"used hash", [](ServiceKey& k) { k.id = "svk_0000000000000002"; }},
       {"no name",
        [](ServiceKey& k) {
          k.id = "svk_0000000000000002";
          k.token_hash = std::string(64, 'c');
          k.name.clear();
        }},
       {"short hash",
        [](ServiceKey& k) {
          k.id = "svk_0000000000000002";
          k.token_hash = "abc";
        }}},
      [](ServiceKey k) { return CreateServiceKey{std::move(k)}; });
  ok(RevokeServiceKey{.id = key.id}, kT0 + 1);
  EXPECT_EQ(core.state().service_keys.at(key.id).revoked_at_ms, kT0 + 1);
  EXPECT_TRUE(ok(RevokeServiceKey{.id = key.id}, kT0 + 2).empty());
}

}  // namespace
}  // namespace allot
