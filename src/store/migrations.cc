#include "store/migrations.h"

#include <array>

namespace allot {
namespace {

constexpr std::array<std::string_view, 6> kIdentity = {
    R"(CREATE TABLE tenants (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL UNIQUE,
         is_operator BIGINT NOT NULL,
         created_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE projects (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         name TEXT NOT NULL,
         created_at_ms BIGINT NOT NULL,
         deleted_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE users (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         name TEXT NOT NULL,
         email TEXT NOT NULL,
         role TEXT NOT NULL,
         disabled BIGINT NOT NULL,
         created_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE api_keys (
         id TEXT PRIMARY KEY,
         user_id TEXT NOT NULL REFERENCES users (id),
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         name TEXT NOT NULL,
         prefix TEXT NOT NULL,
         token_hash TEXT NOT NULL UNIQUE,
         created_at_ms BIGINT NOT NULL,
         revoked_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE audit_log (
         seq BIGINT PRIMARY KEY,
         at_ms BIGINT NOT NULL,
         tenant_id TEXT NOT NULL,
         user_id TEXT NOT NULL,
         key_id TEXT NOT NULL,
         method TEXT NOT NULL,
         path TEXT NOT NULL,
         target_id TEXT NOT NULL,
         status BIGINT NOT NULL,
         error_code TEXT NOT NULL))",
    "CREATE INDEX audit_log_by_tenant ON audit_log (tenant_id, seq)",
};

// Nodes and instances change shape often while the cluster grows features: each is one JSON
// document, with the columns that queries filter on beside it.
constexpr std::array<std::string_view, 4> kCluster = {
    R"(CREATE TABLE join_tokens (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         token_hash TEXT NOT NULL UNIQUE,
         created_at_ms BIGINT NOT NULL,
         expires_at_ms BIGINT NOT NULL,
         revoked_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE nodes (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL UNIQUE,
         doc TEXT NOT NULL))",
    R"(CREATE TABLE instances (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         project_id TEXT NOT NULL REFERENCES projects (id),
         state TEXT NOT NULL,
         created_at_ms BIGINT NOT NULL,
         doc TEXT NOT NULL))",
    "CREATE INDEX instances_by_created ON instances (created_at_ms, id)",
};

// The operator's rules on who may hold which GPUs, and tenants' fair-share weights.
constexpr std::array<std::string_view, 3> kRules = {
    R"(CREATE TABLE quotas (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         doc TEXT NOT NULL))",
    R"(CREATE TABLE reservations (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         doc TEXT NOT NULL))",
    "ALTER TABLE tenants ADD COLUMN weight BIGINT NOT NULL DEFAULT 1",
};

// The ledger's journal: accounts and transfers as they were asked; balances are derived.
constexpr std::array<std::string_view, 2> kLedger = {
    R"(CREATE TABLE ledger_accounts (
         id TEXT PRIMARY KEY,
         code TEXT NOT NULL,
         limits BIGINT NOT NULL,
         created_at_ms BIGINT NOT NULL))",
    R"(CREATE TABLE ledger_transfers (
         seq BIGINT PRIMARY KEY,
         id TEXT NOT NULL UNIQUE,
         debit_account_id TEXT NOT NULL,
         credit_account_id TEXT NOT NULL,
         amount BIGINT NOT NULL,
         kind BIGINT NOT NULL,
         pending_id TEXT NOT NULL,
         timeout_ms BIGINT NOT NULL,
         linked BIGINT NOT NULL,
         code TEXT NOT NULL,
         created_at_ms BIGINT NOT NULL))",
};

// The price catalog: one row per GPU model x region x class x effective moment.
constexpr std::array<std::string_view, 1> kPrices = {
    R"(CREATE TABLE prices (
         gpu_model TEXT NOT NULL,
         region TEXT NOT NULL,
         price_class TEXT NOT NULL,
         effective_at_ms BIGINT NOT NULL,
         doc TEXT NOT NULL,
         PRIMARY KEY (gpu_model, region, price_class, effective_at_ms)))",
};

// Tenant money: how a tenant pays, its credit limit, and the ledger accounts' own datum.
constexpr std::array<std::string_view, 3> kMoney = {
    "ALTER TABLE tenants ADD COLUMN billing TEXT NOT NULL DEFAULT 'postpaid'",
    "ALTER TABLE tenants ADD COLUMN credit_limit_micros BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE ledger_accounts ADD COLUMN user_data BIGINT NOT NULL DEFAULT 0",
};

// Invoices and credit notes: documents, with the columns that identify and number them beside. A
// number is given once: the unique indexes hold that even against a bug.
constexpr std::array<std::string_view, 4> kInvoices = {
    R"(CREATE TABLE invoices (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         month_ms BIGINT NOT NULL,
         status TEXT NOT NULL,
         number TEXT NOT NULL,
         doc TEXT NOT NULL))",
    "CREATE UNIQUE INDEX invoices_by_number ON invoices (number) WHERE number <> ''",
    R"(CREATE TABLE credit_notes (
         id TEXT PRIMARY KEY,
         invoice_id TEXT NOT NULL REFERENCES invoices (id),
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         number TEXT NOT NULL UNIQUE,
         doc TEXT NOT NULL))",
    "CREATE INDEX credit_notes_by_invoice ON credit_notes (invoice_id)",
};

// Budgets, their alerts, the event log and the webhook outbox with every attempt.
constexpr std::array<std::string_view, 7> kBudgets = {
    R"(CREATE TABLE budgets (
         id TEXT PRIMARY KEY,
         tenant_id TEXT NOT NULL REFERENCES tenants (id),
         doc TEXT NOT NULL))",
    R"(CREATE TABLE budget_alerts (
         budget_id TEXT NOT NULL REFERENCES budgets (id),
         month TEXT NOT NULL,
         threshold_pct BIGINT NOT NULL,
         spend_micros BIGINT NOT NULL,
         at_ms BIGINT NOT NULL,
         PRIMARY KEY (budget_id, month, threshold_pct)))",
    R"(CREATE TABLE events (
         seq BIGINT PRIMARY KEY,
         at_ms BIGINT NOT NULL,
         tenant_id TEXT NOT NULL,
         kind TEXT NOT NULL,
         payload TEXT NOT NULL))",
    "CREATE INDEX events_by_tenant ON events (tenant_id, seq)",
    R"(CREATE TABLE webhook_deliveries (
         event_seq BIGINT PRIMARY KEY REFERENCES events (seq),
         budget_id TEXT NOT NULL REFERENCES budgets (id),
         url TEXT NOT NULL,
         state TEXT NOT NULL,
         attempts BIGINT NOT NULL,
         next_attempt_ms BIGINT NOT NULL,
         last_status TEXT NOT NULL))",
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_ms)",
    R"(CREATE TABLE webhook_attempts (
         event_seq BIGINT NOT NULL REFERENCES webhook_deliveries (event_seq),
         attempt BIGINT NOT NULL,
         at_ms BIGINT NOT NULL,
         result TEXT NOT NULL,
         PRIMARY KEY (event_seq, attempt)))",
};

// The operator's books: assets, sites (per region), fixed costs, rental prices, and each node's
// energy per hour.
constexpr std::array<std::string_view, 5> kBooks = {
    "CREATE TABLE assets (id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    "CREATE TABLE sites (region TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    "CREATE TABLE fixed_costs (id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    "CREATE TABLE rental_prices (key TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    R"(CREATE TABLE node_energy (
         node_id TEXT NOT NULL REFERENCES nodes (id),
         hour_ms BIGINT NOT NULL,
         energy_mj BIGINT NOT NULL,
         PRIMARY KEY (node_id, hour_ms)))",
};

// Node pools and the nodes the autoscaler asked their providers for.
constexpr std::array<std::string_view, 2> kPools = {
    "CREATE TABLE pools (id TEXT PRIMARY KEY, name TEXT NOT NULL, doc TEXT NOT NULL)",
    "CREATE TABLE pool_nodes (id TEXT PRIMARY KEY, pool_id TEXT NOT NULL REFERENCES pools (id), "
    "state TEXT NOT NULL, doc TEXT NOT NULL)",
};

// Spot price rules: the curve each model's spot price follows in a region. The prices they set
// are ordinary rows of the price catalog.
constexpr std::array<std::string_view, 1> kSpotRules = {
    "CREATE TABLE spot_rules (key TEXT PRIMARY KEY, doc TEXT NOT NULL)",
};

// The latency table: round trips from client locations to regions; deleted entries stay as
// tombstones so that a restart does not bring them back.
constexpr std::array<std::string_view, 1> kLatency = {
    "CREATE TABLE latencies (from_location TEXT NOT NULL, region TEXT NOT NULL, "
    "doc TEXT NOT NULL, PRIMARY KEY (from_location, region))",
};

// Idle stop: a project's policy, as a JSON document ('' for none). Instances keep theirs in their
// document.
constexpr std::array<std::string_view, 1> kIdle = {
    "ALTER TABLE projects ADD COLUMN idle TEXT NOT NULL DEFAULT ''",
};

// Tenants' billing details, printed on their invoices: one JSON document ('' for none).
constexpr std::array<std::string_view, 1> kBillingDetails = {
    "ALTER TABLE tenants ADD COLUMN billing_details TEXT NOT NULL DEFAULT ''",
};

// Tenants' credentials for private image registries, the password sealed by allotd's key; a
// deleted one stays as a tombstone without it.
constexpr std::array<std::string_view, 1> kRegistries = {
    "CREATE TABLE registry_credentials (tenant_id TEXT NOT NULL, host TEXT NOT NULL, "
    "doc TEXT NOT NULL, PRIMARY KEY (tenant_id, host))",
};

// The operator's pre-pulls of images onto nodes, each node's part in its document.
constexpr std::array<std::string_view, 1> kImagePulls = {
    "CREATE TABLE image_pulls (id TEXT PRIMARY KEY, created_at_ms BIGINT NOT NULL, "
    "doc TEXT NOT NULL)",
};

// Tenants' volumes, deleted ones too (kept so that storage can be billed to their deletion).
constexpr std::array<std::string_view, 1> kVolumes = {
    "CREATE TABLE volumes (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "created_at_ms BIGINT NOT NULL, doc TEXT NOT NULL)",
};

// Whether a tenant's members may exec into its instances; every tenant may until told otherwise.
constexpr std::array<std::string_view, 1> kExec = {
    "ALTER TABLE tenants ADD COLUMN exec_allowed BIGINT NOT NULL DEFAULT 1",
};

// High availability: the leader's lease (one row, on the database's clock), the replicas seen,
// settings every replica must agree on, and instances' output, which a new leader must serve.
constexpr std::array<std::string_view, 5> kReplicas = {
    "CREATE TABLE leader_lease (id BIGINT PRIMARY KEY, holder TEXT NOT NULL, url TEXT NOT NULL, "
    "epoch BIGINT NOT NULL, expires_ms BIGINT NOT NULL)",
    "INSERT INTO leader_lease (id, holder, url, epoch, expires_ms) VALUES (1, '', '', 0, 0)",
    "CREATE TABLE replicas (url TEXT PRIMARY KEY, holder TEXT NOT NULL, seen_ms BIGINT NOT NULL)",
    "CREATE TABLE cluster_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE instance_logs (instance_id TEXT NOT NULL, start_at BIGINT NOT NULL, "
    "size BIGINT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (instance_id, start_at))",
};

// Services: tenants' endpoints served over replicas, deleted ones too, and their callers' keys.
constexpr std::array<std::string_view, 2> kServices = {
    "CREATE TABLE services (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "created_at_ms BIGINT NOT NULL, doc TEXT NOT NULL)",
    "CREATE TABLE service_keys (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "created_at_ms BIGINT NOT NULL, doc TEXT NOT NULL)",
};

// Services' use by other tenants, per caller and hour, as billed.
constexpr std::array<std::string_view, 1> kServiceUsage = {
    "CREATE TABLE service_usage (id TEXT PRIMARY KEY, caller_tenant_id TEXT NOT NULL, "
    "hour_ms BIGINT NOT NULL, doc TEXT NOT NULL)",
};

constexpr std::array<Migration, 21> kMigrations = {
    Migration{1, "identity: tenants, projects, users, API keys, audit log", kIdentity},
    Migration{2, "cluster: join tokens, nodes, instances", kCluster},
    Migration{3, "rules: quotas, reservations, tenant weights", kRules},
    Migration{4, "ledger: accounts and the transfer journal", kLedger},
    Migration{5, "prices: the effective-dated price catalog", kPrices},
    Migration{6, "money: tenant billing modes, credit limits, account data", kMoney},
    Migration{7, "invoices: invoices and credit notes", kInvoices},
    Migration{8, "budgets: alerts, the event log and the webhook outbox", kBudgets},
    Migration{9, "books: assets, sites, fixed costs, rental prices, node energy", kBooks},
    Migration{10, "pools: node pools and their nodes", kPools},
    Migration{11, "spot rules: spot prices that follow utilisation", kSpotRules},
    Migration{12, "latency: round trips from client locations to regions", kLatency},
    Migration{13, "idle: projects' idle-stop policies", kIdle},
    Migration{14, "billing details: what invoices say about each tenant", kBillingDetails},
    Migration{15, "registries: tenants' credentials for private image registries", kRegistries},
    Migration{16, "image pulls: the operator's pre-pulls of images onto nodes", kImagePulls},
    Migration{17, "volumes: tenants' storage that outlives their instances", kVolumes},
    Migration{18, "exec: whether a tenant's members may exec into its instances", kExec},
    Migration{19, "replicas: the leader's lease, replicas, shared settings, instance logs",
              kReplicas},
    Migration{20, "services: endpoints served over replicas that scale with traffic", kServices},
    Migration{21, "service usage: other tenants' calls to shared services, as billed",
              kServiceUsage},
};

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

}  // namespace allot
