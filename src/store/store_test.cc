// One suite, run against both backends.
#include "store/store.h"

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/pools/burst_pool.h"
#include "store/cluster_json.h"

#include "support/postgres.h"
#include "support/temp_dir.h"

namespace allot {
namespace {

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      if (!testing::postgres_available()) GTEST_SKIP() << "no PostgreSQL test server";
      auto url = testing::new_postgres_database();
      ASSERT_TRUE(url);
      location_ = *url;
    } else {
      location_ = (dir_.path() / "allot.db").string();
    }
    store_ = open();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> open() {
    auto store =
        GetParam() == "postgres" ? open_postgres_store(location_) : open_sqlite_store(location_);
    EXPECT_TRUE(store) << (store ? "" : store.error().message);
    return store ? std::move(*store) : nullptr;
  }

  // Closes the store, as a restart does, and loads every row back from a new one.
  Result<std::vector<Row>> reopen_and_load() {
    store_.reset();
    store_ = open();
    return store_->load();
  }

  // Reopens the store and checks that it loads back `expected`, in load order.
  void expect_loads(const std::vector<Row>& expected) {
    auto rows = reopen_and_load();
    ASSERT_TRUE(rows) << rows.error().message;
    EXPECT_EQ(*rows, expected);
  }

  testing::TempDir dir_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

const Tenant kTenant{.id = "ten_0000000000000001", .name = "acme", .created_at_ms = 10};
const User kUser{.id = "usr_0000000000000001",
                 .tenant_id = kTenant.id,
                 .name = "Ann",
                 .email = "ann@acme",
                 .role = Role::kTenantAdmin,
                 .created_at_ms = 11};
const Project kProject{
    .id = "prj_0000000000000001", .tenant_id = kTenant.id, .name = "train", .created_at_ms = 12};
const ApiKey kKey{.id = "key_0000000000000001",
                  .user_id = kUser.id,
                  .tenant_id = kTenant.id,
                  .name = "laptop",
                  .prefix = "allot_abcdef",
                  .token_hash = std::string(64, 'f'),
                  .created_at_ms = 13};

AuditEntry audit(int64_t seq, std::string tenant) {
  return AuditEntry{.seq = seq,
                    .at_ms = 100 + seq,
                    .tenant_id = std::move(tenant),
                    .user_id = kUser.id,
                    .key_id = kKey.id,
                    .method = "POST",
                    .path = "/v1/projects",
                    .target_id = kProject.id,
                    .status = 201};
}

TEST_P(StoreTest, MigrationsRunOnceAndReachTheLatestVersion) {
  EXPECT_EQ(store_->schema_version(), 21);
  EXPECT_EQ(store_->backend(), GetParam());
  store_.reset();
  auto again = open();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->schema_version(), 21);
}

TEST_P(StoreTest, WhatIsCommittedLoadsBackAfterReopening) {
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant, kUser, kProject, kKey}}));
  Project deleted = kProject;
  deleted.deleted_at_ms = 99;
  User disabled = kUser;
  disabled.disabled = true;
  disabled.role = Role::kViewer;
  ApiKey revoked = kKey;
  revoked.revoked_at_ms = 77;
  ASSERT_TRUE(store_->commit(Batch{.rows = {deleted, disabled, revoked}}));
  expect_loads({kTenant, disabled, deleted, revoked});
}

TEST_P(StoreTest, RulesAndWeightsLoadBackAfterReopening) {
  Tenant weighted = kTenant;
  weighted.weight = 7;
  const Quota quota{.id = "quo_0000000000000001",
                    .tenant_id = kTenant.id,
                    .project_id = kProject.id,
                    .gpu_model = "H100",
                    .gpu_milli = 2'500,
                    .created_at_ms = 20};
  const Reservation reservation{.id = "rsv_0000000000000001",
                                .tenant_id = kTenant.id,
                                .gpu_model = "H100-80GB",
                                .gpus = 16,
                                .starts_at_ms = 1'000,
                                .ends_at_ms = 2'000,
                                .created_at_ms = 21};
  const meter::Price price{
      .key = {.model = "H100-80GB", .region = "eu", .price_class = PriceClass::kSpot},
      .effective_ms = 1'000,
      .gpu_hour_micros = 1'250'000};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant, kProject, quota, reservation, price}}));
  Quota deleted = quota;
  deleted.deleted_at_ms = 30;
  Reservation cancelled = reservation;
  cancelled.cancelled_at_ms = 31;
  ASSERT_TRUE(store_->commit(Batch{.rows = {weighted, deleted, cancelled}}));
  expect_loads({weighted, kProject, deleted, cancelled, price});
}

TEST_P(StoreTest, TheBooksAndEnergyLoadBackAfterReopening) {
  Node node{.id = "nod_0000000000000001", .name = "n1", .region = "eu"};
  node.gpus.push_back(Gpu{.index = 0, .uuid = "GPU-0", .model = "H100-80GB"});
  finance::Asset asset{
      .id = "ast_0000000000000001",
      .name = "rack one",
      .node_ids = {node.id},
      .cost_micros = 300'000'000'000,
      .in_service_ms = 1'000,
      .life_months = 60,
      .salvage_micros = 1'000'000,
      .method = finance::Method::kDecliningBalance,
      .declining_factor_milli = 1'500,
      .changes = {{.from_month_ms = 2'678'400'000, .life_months = 48, .salvage_micros = 5}},
      .financing = {.kind = finance::FinancingKind::kLoan,
                    .principal_micros = 100'000'000'000,
                    .annual_rate_ppm = 65'000,
                    .term_months = 36},
      .power_kw_milli = 10'500,
      .created_at_ms = 3};
  const Site site{.region = "eu",
                  .pue_milli = 1'300,
                  .colocation_micros_per_kw_month = 150'000'000,
                  .power_micros_per_kwh = {{0, 200'000}, {5'000, 210'000}},
                  .carbon_g_per_kwh = {{0, 380}}};
  const FixedCost cost{.id = "fxc_0000000000000001",
                       .name = "staff",
                       .monthly_micros = 9'000'000'000,
                       .region = "eu",
                       .rule = AllocationRule::kByPower,
                       .from_month_ms = 0,
                       .created_at_ms = 4};
  const RentalPrice rent{.provider = "cloud", .gpu_model = "H100-80GB", .micros_per_gpu_hour = 3};
  const NodeEnergy energy{.node_id = node.id, .hour_ms = 3'600'000, .energy_mj = 12'345};
  NodeEnergy more = energy;
  more.energy_mj = 20'000;
  ASSERT_TRUE(store_->commit(Batch{.rows = {node, asset, site, cost, rent, energy}}));
  ASSERT_TRUE(store_->commit(Batch{.rows = {more}}));  // The hour's total grows in place.
  expect_loads({node, asset, site, cost, rent, more});
}

TEST_P(StoreTest, IdlePoliciesOfProjectsAndInstancesLoadBackAfterReopening) {
  Project watched = kProject;
  watched.idle = IdlePolicy{.threshold_pct = 5, .window_s = 900, .action = IdleAction::kNotify};
  Instance instance{.id = "ins_0000000000000001",
                    .tenant_id = kTenant.id,
                    .project_id = kProject.id,
                    .user_id = kUser.id,
                    .spec = {.gpus = 1, .command = {"sleep", "9"}},
                    .state = InstanceState::kRunning,
                    .stop_requested = true,
                    .stop_reason = "idle: GPUs under 10 % for 60 s",
                    .idle_since_ms = 40,
                    .idle_notified = true};
  instance.spec.idle = IdlePolicy{.threshold_pct = 10, .window_s = 60};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant, watched, instance}}));
  expect_loads({kTenant, watched, instance});
}

TEST(ClusterJson, AnInstanceWrittenBeforeIdleStopLoadsWithoutAPolicy) {
  Instance old{.id = "ins_0000000000000002", .spec = {.gpus = 1, .command = {"true"}}};
  nlohmann::json doc = instance_document(old);
  doc["spec"].erase("idle");
  doc.erase("idle_since_ms");
  doc.erase("idle_notified");
  doc.erase("stop_reason");
  auto loaded = instance_from_document(doc);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(*loaded, old);
  EXPECT_FALSE(loaded->spec.idle.has_value());
}

TEST_P(StoreTest, PoolsAndTheirNodesLoadBackAfterReopening) {
  // The pool tests' pool, with every field set away from its default.
  Pool pool = burst_pool("pol_0000000000000001", /*cooldown_ms=*/90'000);
  pool.min_nodes = 1;
  pool.max_nodes = 4;
  pool.provider = PoolProvider::kCommand;
  pool.memory_mib = 65'536;
  pool.create_command = "./make-node";
  pool.delete_command = "./drop-node";
  pool.created_at_ms = 5;
  pool.last_scale_up_ms = 7;
  pool.boot_failures = 2;
  PoolNode node{.id = "pnd_0000000000000001",
                .pool_id = pool.id,
                .name = "burst-1",
                .join_token_id = "jtk_0000000000000001",
                .reason = "2 queued instances fit no node",
                .requested_at_ms = 7};
  ASSERT_TRUE(store_->commit(Batch{.rows = {pool, node}}));
  node.state = PoolNodeState::kDeleting;
  node.delete_attempts = 1;
  ASSERT_TRUE(store_->commit(Batch{.rows = {node}}));
  expect_loads({pool, node});
}

TEST_P(StoreTest, SpotRulesLoadBackAndADeletedOneStaysDeleted) {
  SpotRule rule{.model = "H100-80GB",
                .region = "eu",
                .curve = {{0, 1'000'000}, {60, 2'500'000}, {100, 4'000'000}},
                .interval_ms = 60'000,
                .created_at_ms = 5,
                .last_priced_ms = 9};
  SpotRule gone{.model = "A100-80GB", .region = "eu", .curve = {{0, 1}, {100, 2}}};
  ASSERT_TRUE(store_->commit(Batch{.rows = {rule, gone}}));
  gone.curve.clear();
  ASSERT_TRUE(store_->commit(Batch{.rows = {gone}}));
  expect_loads({gone, rule});  // By key; the state drops the curveless one.
}

TEST_P(StoreTest, LatenciesLoadBackAndADeletedOneStaysDeleted) {
  const Latency kept{.from = "eu-users", .region = "eu", .rtt_ms = 12, .updated_at_ms = 5};
  Latency dropped{.from = "eu-users", .region = "us", .rtt_ms = 95, .updated_at_ms = 5};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kept, dropped}}));
  dropped.deleted_at_ms = 9;
  ASSERT_TRUE(store_->commit(Batch{.rows = {dropped}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows) << rows.error().message;
  const std::vector<Row> expected = {kept, dropped};
  EXPECT_EQ(*rows, expected);
  State state;
  for (const Row& row : *rows) state.put(row);
  EXPECT_NE(state.latency("eu-users", "eu"), nullptr);
  EXPECT_EQ(state.latency("eu-users", "us"), nullptr);
}

TEST_P(StoreTest, RegistryCredentialsLoadBackSealedAndADeletedOneStaysDeleted) {
  const RegistryCredential kept{.tenant_id = kTenant.id,
                                .host = "registry.example:5000",
                                .username = "ci",
                                .sealed_password = "c2VhbGVk",
                                .updated_at_ms = 5};
  RegistryCredential dropped{.tenant_id = kTenant.id,
                             .host = "ghcr.io",
                             .username = "bot",
                             .sealed_password = "b3RoZXI=",
                             .updated_at_ms = 5};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kept, dropped}}));
  dropped.sealed_password.clear();
  dropped.deleted_at_ms = 9;
  ASSERT_TRUE(store_->commit(Batch{.rows = {dropped}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows) << rows.error().message;
  const std::vector<Row> expected = {dropped, kept};  // By tenant, then host.
  EXPECT_EQ(*rows, expected);
  State state;
  for (const Row& row : *rows) state.put(row);
  ASSERT_NE(state.registry_credential(kTenant.id, "registry.example:5000"), nullptr);
  EXPECT_EQ(state.registry_credential(kTenant.id, "ghcr.io"), nullptr);
}

TEST_P(StoreTest, VolumesLoadBackWithTheirNodeAndADeletedOneStaysForItsBilling) {
  Volume local{.id = "vol_0000000000000001",
               .tenant_id = kTenant.id,
               .project_id = "prj_0000000000000001",
               .name = "ckpt",
               .region = "eu",
               .backend = "local",
               .size_gb = 100,
               .created_at_ms = 5};
  Volume shared = local;
  shared.id = "vol_0000000000000002";
  shared.name = "datasets";
  shared.backend = "nfs";
  shared.created_at_ms = 6;
  ASSERT_TRUE(store_->commit(Batch{.rows = {local, shared}}));
  local.node_id = "nod_0000000000000001";  // Its first instance was placed.
  shared.deleted_at_ms = 9;
  // Its storage posted in full: settled.
  shared.billed_micros = 1'234;
  shared.billed_to_ms = 9;
  shared.postings = 3;
  shared.settled = true;
  const meter::Price storage{
      .key = meter::storage_key("eu"), .effective_ms = 1, .storage_gb_month_micros = 100'000};
  ASSERT_TRUE(store_->commit(Batch{.rows = {local, shared, storage}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows) << rows.error().message;
  State state;
  for (const Row& row : *rows) state.put(row);
  EXPECT_EQ(state.prices.at(meter::storage_key("eu"), 1)->storage_gb_month_micros, 100'000);
  EXPECT_TRUE(state.prices.prices().empty());  // A storage price is no GPU price.
  EXPECT_EQ(*state.volume(shared.id), shared);
  EXPECT_EQ(*state.volume(local.id), local);
  EXPECT_TRUE(state.unsettled_volumes.at(kTenant.id) == std::set<std::string>{local.id});
  ASSERT_NE(state.volume_named(kTenant.id, "ckpt"), nullptr);
  EXPECT_EQ(state.volume_named(kTenant.id, "ckpt")->node_id, "nod_0000000000000001");
  EXPECT_EQ(state.volume_named(kTenant.id, "datasets"), nullptr);
  ASSERT_NE(state.volume(shared.id), nullptr);
  EXPECT_EQ(state.volume(shared.id)->deleted_at_ms, 9);
}

TEST_P(StoreTest, ServicesLoadBackWithTheirRevisionsKeysReplicasAndUse) {
  HostedService service{
      .id = "svc_0000000000000001",
      .tenant_id = kTenant.id,
      .project_id = kProject.id,
      .user_id = "usr_1",
      .name = "chat",
      .model = "llama-3-8b",
      .max_replicas = 4,
      .target_concurrency = 4,
      .scale_to_zero_after_ms = 600'000,
      .revisions = {ServiceRevision{.number = 1,
                                    .spec = InstanceSpec{.gpus = 1,
                                                         .command = {"serve"},
                                                         .interactive = true,
                                                         .ports = {PublishedPort{.port = 8000}}},
                                    .port = 8000,
                                    .readiness = "/health",
                                    .created_at_ms = 5}},
      .revision = 1,
      .created_at_ms = 5};
  const ServiceKey key{.id = "svk_0000000000000001",
                       .tenant_id = kTenant.id,
                       .service_id = service.id,
                       .name = "acme",
                       .prefix = "allot_svc_abcdef",
                       .token_hash = std::string(64, 'd'),
                       .created_at_ms = 6};
  Instance replica{.id = "ins_0000000000000001",
                   .tenant_id = kTenant.id,
                   .project_id = kProject.id,
                   .spec = service.revisions.front().spec,
                   .created_at_ms = 7};
  replica.spec.service_id = service.id;
  replica.spec.service_revision = 1;
  // Another tenant's use of it, one hour's row, written twice as the controller does.
  ServiceUsage usage{.id = "svc_0000000000000001/ten_caller/3600000/1000/2500",
                     .service_id = service.id,
                     .tenant_id = kTenant.id,
                     .caller_tenant_id = "ten_caller",
                     .hour_ms = 3'600'000,
                     .price_per_request_micros = 1'000,
                     .price_per_1k_tokens_micros = 2'500,
                     .requests = 2,
                     .tokens = 10,
                     .charged_micros = 2'025,
                     .paid_micros = 2'025,
                     .postings = 1};
  const Status made =
      store_->commit(Batch{.rows = {kTenant, kUser, kProject, service, key, replica, usage}});
  ASSERT_TRUE(made) << made.error().message;
  service.serving_revision = 1;
  service.rollout = "done";
  service.desired = 0;
  usage.requests = 3;
  usage.malformed = 1;
  ASSERT_TRUE(store_->commit(Batch{.rows = {service, usage}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows) << rows.error().message;
  State state;
  for (const Row& row : *rows) state.put(row);
  EXPECT_EQ(*state.service(service.id), service);
  EXPECT_EQ(state.service_keys.at(key.id), key);
  EXPECT_EQ(state.instance(replica.id)->spec.service_id, service.id);
  EXPECT_TRUE(state.replicas_by_service.at(service.id) == std::set<std::string>{replica.id});
  EXPECT_EQ(state.service_by_name.at({kTenant.id, "chat"}), service.id);
  EXPECT_EQ(state.service_usage.at(usage.id), usage);
  EXPECT_TRUE(state.usage_by_caller.at("ten_caller") == std::set<std::string>{usage.id});
}

TEST_P(StoreTest, APullAndANodesImagesLoadBackAsTheyWere) {
  const ImagePull pull{.id = "ipl_0000000000000001",
                       .image = "registry.example:5000/team/train:1",
                       .pool = "train",
                       .tenant_id = kTenant.id,
                       .created_at_ms = 7,
                       .targets = {PullTarget{.node_id = "nod_0000000000000001"},
                                   PullTarget{.node_id = "nod_0000000000000002",
                                              .state = PullState::kFailed,
                                              .message = "unauthorized",
                                              .ended_at_ms = 9}}};
  ASSERT_TRUE(store_->commit(Batch{.rows = {pull}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(*rows, std::vector<Row>{pull});

  const Node node{.id = "nod_0000000000000001",
                  .name = "a",
                  .gpu_problem = "no CDI spec",
                  .images = {NodeImage{.id = "abc",
                                       .names = {"docker.io/library/busybox:latest"},
                                       .size_bytes = 4'000'000,
                                       .created_at_ms = 1'000}},
                  .image_store = {.total_bytes = 100, .free_bytes = 40},
                  .images_at_ms = 11};
  auto back = node_from_document(node_document(node));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, node);
}

TEST(InstanceDocumentTest, AnInstanceKeepsItsRegionsAndPreferenceAndOldRowsLoadWithout) {
  const Instance instance{.id = "ins_0000000000000001",
                          .tenant_id = kTenant.id,
                          .spec = {.gpus = 1,
                                   .command = {"true"},
                                   .max_price_micros = 3'000'000,
                                   .regions = {"eu", "eu-north"},
                                   .prefer = Prefer::kLatency,
                                   .from = "eu-users"}};
  nlohmann::json doc = instance_document(instance);
  EXPECT_EQ(*instance_from_document(doc), instance);
  // A row written before these fields existed: any region, no preference.
  for (const char* field : {"regions", "prefer", "from"}) doc["spec"].erase(field);
  const auto old = instance_from_document(doc);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old->spec.regions.empty());
  EXPECT_EQ(old->spec.prefer, Prefer::kNone);
  EXPECT_EQ(old->spec.from, "");
}

TEST_P(StoreTest, TheLedgerJournalReplaysToTheSameBalances) {
  ledger::Ledger ledger;
  const std::vector<ledger::Account> accounts = {
      {.id = "operator", .code = "operator"},
      {.id = "cash", .code = "tenant_cash", .debits_must_not_exceed_credits = true},
      {.id = "revenue", .code = "revenue"}};
  std::vector<ledger::Account> made;
  for (const auto& a : accounts) {
    ASSERT_TRUE(ledger.create_account(a, 5));
    made.push_back(*ledger.account(a.id));
  }
  ASSERT_TRUE(store_->put_ledger_accounts(made));
  const std::vector<ledger::Transfer> batch = {
      {.id = "topup", .debit_account_id = "operator", .credit_account_id = "cash", .amount = 900},
      {.id = "hold",
       .debit_account_id = "cash",
       .credit_account_id = "revenue",
       .amount = 500,
       .kind = ledger::TransferKind::kPending,
       .timeout_ms = 60'000},
      {.id = "a",
       .debit_account_id = "cash",
       .credit_account_id = "revenue",
       .amount = 100,
       .linked = true},
      {.id = "b", .debit_account_id = "cash", .credit_account_id = "revenue", .amount = 100},
      {.id = "post",
       .amount = 200,
       .kind = ledger::TransferKind::kPostPending,
       .pending_id = "hold"}};
  for (const Status& r : ledger.create_transfers(batch, 1'000)) ASSERT_TRUE(r);
  ASSERT_TRUE(store_->append_transfers(ledger.requests(), 0));
  // A hold left to expire, in a second batch.
  ASSERT_TRUE(ledger.create_transfer({.id = "late",
                                      .debit_account_id = "cash",
                                      .credit_account_id = "revenue",
                                      .amount = 300,
                                      .kind = ledger::TransferKind::kPending,
                                      .timeout_ms = 10},
                                     2'000));
  ASSERT_TRUE(store_->append_transfers(std::span(ledger.requests()).subspan(5), 5));
  store_.reset();
  auto loaded = open()->load_ledger();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->accounts(), ledger.accounts());
  EXPECT_EQ(loaded->transfers(), ledger.transfers());
  EXPECT_EQ(loaded->account("cash")->credit_balance(), 500);
  // The same seq twice is refused: the journal never rewrites a position.
  EXPECT_FALSE(open()->append_transfers(std::span(ledger.requests()).subspan(5), 5));
}

TEST_P(StoreTest, InvoicesAndCreditNotesLoadBackAfterReopening) {
  Invoice invoice{
      .id = "inv_0000000000000001",
      .tenant_id = kTenant.id,
      .month_ms = 1'793'491'200'000,
      .lines = {InvoiceLine{
          .project_id = kProject.id,
          .key = {.model = "H100-80GB", .region = "eu", .price_class = PriceClass::kSpot},
          .gpu_milli_seconds = 45'000'000,
          .amount_micros = 31'250'000}},
      .subtotal_micros = 31'250'000,
      .credits_micros = 250'000,
      .total_micros = 31'000'000,
      .created_at_ms = 40,
      .drafted_at_ms = 41};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant, kProject, invoice}}));
  // A prepaid invoice, finalized early, with the customer's details as drafted; the tenant's
  // own details beside it.
  Tenant billed = kTenant;
  billed.details = BillingDetails{.legal_name = "Acme Ltd",
                                  .address = "1 Main St\nSpringfield",
                                  .tax_id = "GB123",
                                  .email = "ap@acme.example"};
  invoice.period_start_ms = invoice.month_ms;
  invoice.period_end_ms = invoice.month_ms + 86'400'000;
  invoice.early = true;
  invoice.prepaid = true;
  invoice.payments = BalancePayments{.paid_micros = 30'000'000,
                                     .transfers = 2,
                                     .first_transfer_id = "usage/ins_1/1/0",
                                     .last_transfer_id = "usage/ins_1/2/0"};
  invoice.customer = billed.details;
  invoice.status = InvoiceStatus::kFinal;
  invoice.number = "INV-000001";
  invoice.finalized_at_ms = 42;
  invoice.credited_micros = 1'000'000;
  const CreditNote note{.id = "crn_0000000000000001",
                        .invoice_id = invoice.id,
                        .tenant_id = kTenant.id,
                        .number = "CN-000001",
                        .amount_micros = 1'000'000,
                        .reason = "outage, 2 h",
                        .created_at_ms = 43};
  ASSERT_TRUE(store_->commit(Batch{.rows = {billed, invoice, note}}));
  // A second invoice with a number already given is refused by the store itself.
  Invoice twin = invoice;
  twin.id = "inv_0000000000000002";
  EXPECT_FALSE(store_->commit(Batch{.rows = {twin}}));
  expect_loads({billed, kProject, invoice, note});
}

TEST_P(StoreTest, AFailingBatchWritesNothing) {
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant}, .audit = {audit(1, kTenant.id)}}));
  // The second audit entry reuses seq 1, so the whole batch must roll back, project included.
  auto failed = store_->commit(Batch{.rows = {kUser, kProject}, .audit = {audit(1, "x")}});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  auto rows = store_->load();
  ASSERT_TRUE(rows);
  EXPECT_EQ(*rows, std::vector<Row>{kTenant});
  // A project whose tenant does not exist breaks a foreign key: refused too.
  Project orphan = kProject;
  orphan.tenant_id = "ten_00000000000000ff";
  EXPECT_FALSE(store_->commit(Batch{.rows = {orphan}}));
  // The store is still usable afterwards.
  EXPECT_TRUE(store_->commit(Batch{.rows = {kUser}}));
}

TEST_P(StoreTest, AuditPagesByTenantAndSeq) {
  Batch batch{.rows = {kTenant}};
  for (int64_t seq = 1; seq <= 5; ++seq) batch.audit.push_back(audit(seq, seq % 2 ? "a" : "b"));
  ASSERT_TRUE(store_->commit(batch));
  EXPECT_EQ(store_->last_audit_seq().value(), 5);
  auto all = store_->list_audit(AuditQuery{.limit = 10});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 5u);
  EXPECT_EQ(all->front(), audit(1, "a"));
  auto a = store_->list_audit(AuditQuery{.tenant_id = "a", .after_seq = 1, .limit = 1});
  ASSERT_TRUE(a);
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ(a->front().seq, 3);
}

TEST_P(StoreTest, BudgetsAlertsAndTheEventLogLoadBackWithTheOutbox) {
  const Budget budget{.id = "bud_0000000000000001",
                      .tenant_id = kTenant.id,
                      .project_id = kProject.id,
                      .amount_micros = 5'000'000,
                      .thresholds_pct = {50, 100},
                      .webhook_url = "http://127.0.0.1:9/hook",
                      .webhook_secret = "whsec_0123456789abcdef",
                      .enforcement = Enforcement::kStopRunning,
                      .created_at_ms = 20,
                      .updated_at_ms = 20};
  const BudgetAlert alert{.budget_id = budget.id,
                          .month = "2027-01",
                          .threshold_pct = 50,
                          .spend_micros = 2'500'000,
                          .at_ms = 30};
  const Event hooked{.seq = 1,
                     .at_ms = 30,
                     .tenant_id = kTenant.id,
                     .kind = "budget.threshold",
                     .payload = R"({"threshold_pct":50})",
                     .webhook_budget_id = budget.id,
                     .webhook_url = budget.webhook_url};
  const Event other{
      .seq = 2, .at_ms = 31, .tenant_id = "ten_0000000000000002", .kind = "x", .payload = "{}"};
  ASSERT_TRUE(store_->commit(Batch{.rows = {kTenant, kProject, budget, hooked, alert, other}}));
  // A changed amount re-arms a threshold: it alerts again in the same month, and the later alert
  // is the one kept.
  const BudgetAlert again{.budget_id = budget.id,
                          .month = "2027-01",
                          .threshold_pct = 50,
                          .spend_micros = 5'000'000,
                          .at_ms = 40};
  ASSERT_TRUE(store_->commit(Batch{.rows = {again}}));
  auto rows = reopen_and_load();
  ASSERT_TRUE(rows);
  Core core;
  core.restore(*rows);
  EXPECT_EQ(core.state().budgets.at(budget.id), budget);
  EXPECT_EQ(core.state().budget_alerts.at(alert.key()), again);
  EXPECT_EQ(core.state().last_event_seq, 2);

  auto mine = store_->list_events(EventQuery{.tenant_id = kTenant.id});
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ(mine->at(0).event.payload, hooked.payload);
  ASSERT_TRUE(mine->at(0).delivery);
  EXPECT_EQ(mine->at(0).delivery->state, "pending");
  EXPECT_EQ(store_->list_events(EventQuery{.after_seq = 1})->size(), 1u);

  auto due = store_->due_deliveries(30, 10);
  ASSERT_TRUE(due);
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->at(0).secret, budget.webhook_secret);
  EXPECT_EQ(due->at(0).event.webhook_url, budget.webhook_url);
  EXPECT_TRUE(store_->due_deliveries(29, 10)->empty());  // Not before the event.
  const DeliveryStatus retry{
      .state = "pending", .attempts = 1, .next_attempt_ms = 1'030, .last_status = "500"};
  ASSERT_TRUE(store_->record_delivery_attempt(
      DeliveryAttempt{.event_seq = 1, .at_ms = 30, .result = "500", .next = retry}));
  EXPECT_TRUE(store_->due_deliveries(1'029, 10)->empty());
  EXPECT_EQ(store_->due_deliveries(1'030, 10)->at(0).status, retry);
  const DeliveryStatus done{.state = "delivered", .attempts = 2, .last_status = "200"};
  ASSERT_TRUE(store_->record_delivery_attempt(
      DeliveryAttempt{.event_seq = 1, .at_ms = 1'030, .result = "200", .next = done}));
  EXPECT_TRUE(store_->due_deliveries(99'999, 10)->empty());
  EXPECT_EQ(store_->list_events(EventQuery{.tenant_id = kTenant.id})->at(0).delivery, done);
  // Events are append-only: the same seq again is refused, and the batch with it.
  EXPECT_FALSE(store_->commit(Batch{.rows = {hooked}}));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace allot
