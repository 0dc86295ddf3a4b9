// The Store, written once over Db for both backends.
#include <fmt/format.h>

#include "common/clock.h"
#include "store/budget_store.h"
#include "store/cluster_json.h"
#include "store/db.h"
#include "store/finance_json.h"
#include "store/image_json.h"
#include "store/invoice_json.h"
#include "store/latency_json.h"
#include "store/ledger_journal.h"
#include "store/migrations.h"
#include "store/pool_json.h"
#include "store/registry_json.h"
#include "store/spot_rule_json.h"
#include "store/store.h"

namespace allot {
namespace {

constexpr std::string_view kUpsertTenant =
    "INSERT INTO tenants (id, name, is_operator, created_at_ms, weight, billing, "
    "credit_limit_micros, billing_details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, weight = excluded.weight, "
    "billing = excluded.billing, credit_limit_micros = excluded.credit_limit_micros, "
    "billing_details = excluded.billing_details";
constexpr std::string_view kUpsertProject =
    "INSERT INTO projects (id, tenant_id, name, created_at_ms, deleted_at_ms, idle) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, deleted_at_ms = excluded.deleted_at_ms, "
    "idle = excluded.idle";
constexpr std::string_view kUpsertUser =
    "INSERT INTO users (id, tenant_id, name, email, role, disabled, created_at_ms) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT (id) DO UPDATE SET name = excluded.name, role = excluded.role, "
    "disabled = excluded.disabled";
constexpr std::string_view kUpsertKey =
    "INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, token_hash, created_at_ms, "
    "revoked_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
    "ON CONFLICT (id) DO UPDATE SET revoked_at_ms = excluded.revoked_at_ms";
constexpr std::string_view kUpsertJoinToken =
    "INSERT INTO join_tokens (id, name, token_hash, created_at_ms, expires_at_ms, revoked_at_ms) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET revoked_at_ms = excluded.revoked_at_ms";
constexpr std::string_view kUpsertNode =
    "INSERT INTO nodes (id, name, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertInstance =
    "INSERT INTO instances (id, tenant_id, project_id, state, created_at_ms, doc) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET state = excluded.state, doc = excluded.doc";
constexpr std::string_view kUpsertAsset =
    "INSERT INTO assets (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = "
    "excluded.doc";
constexpr std::string_view kUpsertSite =
    "INSERT INTO sites (region, doc) VALUES ($1, $2) "
    "ON CONFLICT (region) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertFixedCost =
    "INSERT INTO fixed_costs (id, doc) VALUES ($1, $2) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertRentalPrice =
    "INSERT INTO rental_prices (key, doc) VALUES ($1, $2) "
    "ON CONFLICT (key) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertNodeEnergy =
    "INSERT INTO node_energy (node_id, hour_ms, energy_mj) VALUES ($1, $2, $3) "
    "ON CONFLICT (node_id, hour_ms) DO UPDATE SET energy_mj = excluded.energy_mj";
constexpr std::string_view kUpsertPool =
    "INSERT INTO pools (id, name, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertLatency =
    "INSERT INTO latencies (from_location, region, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (from_location, region) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertRegistryCredential =
    "INSERT INTO registry_credentials (tenant_id, host, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (tenant_id, host) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertImagePull =
    "INSERT INTO image_pulls (id, created_at_ms, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertPoolNode =
    "INSERT INTO pool_nodes (id, pool_id, state, doc) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (id) DO UPDATE SET state = excluded.state, doc = excluded.doc";
constexpr std::string_view kUpsertSpotRule =
    "INSERT INTO spot_rules (key, doc) VALUES ($1, $2) "
    "ON CONFLICT (key) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertQuota =
    "INSERT INTO quotas (id, tenant_id, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertReservation =
    "INSERT INTO reservations (id, tenant_id, doc) VALUES ($1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc";
constexpr std::string_view kUpsertPrice =
    "INSERT INTO prices (gpu_model, region, price_class, effective_at_ms, doc) "
    "VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (gpu_model, region, price_class, effective_at_ms) DO UPDATE SET doc = "
    "excluded.doc";
constexpr std::string_view kUpsertInvoice =
    "INSERT INTO invoices (id, tenant_id, month_ms, status, number, doc) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET status = excluded.status, number = excluded.number, "
    "doc = excluded.doc";
// Credit notes are never changed once written.
constexpr std::string_view kInsertCreditNote =
    "INSERT INTO credit_notes (id, invoice_id, tenant_id, number, doc) "
    "VALUES ($1, $2, $3, $4, $5)";
constexpr std::string_view kInsertAudit =
    "INSERT INTO audit_log (seq, at_ms, tenant_id, user_id, key_id, method, path, target_id, "
    "status, error_code) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

Status write_row(Db& db, const Row& row) {
  return std::visit(
      [&db](const auto& o) -> Status {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Tenant>) {
          const DbValue p[] = {o.id,
                               o.name,
                               int64_t{o.is_operator},
                               o.created_at_ms,
                               o.weight,
                               std::string(billing_mode_name(o.billing)),
                               o.credit_limit_micros,
                               billing_details_text(o.details)};
          return db.exec(kUpsertTenant, p);
        } else if constexpr (std::is_same_v<T, Project>) {
          const DbValue p[] = {o.id,
                               o.tenant_id,
                               o.name,
                               o.created_at_ms,
                               o.deleted_at_ms,
                               o.idle ? idle_policy_document(*o.idle).dump() : std::string()};
          return db.exec(kUpsertProject, p);
        } else if constexpr (std::is_same_v<T, User>) {
          const DbValue p[] = {o.id,
                               o.tenant_id,
                               o.name,
                               o.email,
                               std::string(role_name(o.role)),
                               int64_t{o.disabled},
                               o.created_at_ms};
          return db.exec(kUpsertUser, p);
        } else if constexpr (std::is_same_v<T, ApiKey>) {
          const DbValue p[] = {o.id,     o.user_id,    o.tenant_id,     o.name,
                               o.prefix, o.token_hash, o.created_at_ms, o.revoked_at_ms};
          return db.exec(kUpsertKey, p);
        } else if constexpr (std::is_same_v<T, JoinToken>) {
          const DbValue p[] = {
              o.id, o.name, o.token_hash, o.created_at_ms, o.expires_at_ms, o.revoked_at_ms};
          return db.exec(kUpsertJoinToken, p);
        } else if constexpr (std::is_same_v<T, Node>) {
          const DbValue p[] = {o.id, o.name, node_document(o).dump()};
          return db.exec(kUpsertNode, p);
        } else if constexpr (std::is_same_v<T, Quota>) {
          const DbValue p[] = {o.id, o.tenant_id, quota_document(o).dump()};
          return db.exec(kUpsertQuota, p);
        } else if constexpr (std::is_same_v<T, Reservation>) {
          const DbValue p[] = {o.id, o.tenant_id, reservation_document(o).dump()};
          return db.exec(kUpsertReservation, p);
        } else if constexpr (std::is_same_v<T, ledger::Account>) {
          return write_ledger_accounts(db, std::span(&o, 1));
        } else if constexpr (std::is_same_v<T, LedgerEntry>) {
          return write_transfers(db, std::span(&o.transfer, 1), o.seq);
        } else if constexpr (std::is_same_v<T, meter::Price>) {
          const DbValue p[] = {o.key.model, o.key.region,
                               std::string(price_class_name(o.key.price_class)), o.effective_ms,
                               price_document(o).dump()};
          return db.exec(kUpsertPrice, p);
        } else if constexpr (std::is_same_v<T, Invoice>) {
          const DbValue p[] = {o.id,       o.tenant_id,
                               o.month_ms, std::string(invoice_status_name(o.status)),
                               o.number,   invoice_document(o).dump()};
          return db.exec(kUpsertInvoice, p);
        } else if constexpr (std::is_same_v<T, CreditNote>) {
          const DbValue p[] = {o.id, o.invoice_id, o.tenant_id, o.number,
                               credit_note_document(o).dump()};
          return db.exec(kInsertCreditNote, p);
        } else if constexpr (std::is_same_v<T, Budget> || std::is_same_v<T, BudgetAlert> ||
                             std::is_same_v<T, Event>) {
          return write_budget_row(db, o);
        } else if constexpr (std::is_same_v<T, finance::Asset>) {
          const DbValue p[] = {o.id, asset_document(o).dump()};
          return db.exec(kUpsertAsset, p);
        } else if constexpr (std::is_same_v<T, Site>) {
          const DbValue p[] = {o.region, site_document(o).dump()};
          return db.exec(kUpsertSite, p);
        } else if constexpr (std::is_same_v<T, FixedCost>) {
          const DbValue p[] = {o.id, fixed_cost_document(o).dump()};
          return db.exec(kUpsertFixedCost, p);
        } else if constexpr (std::is_same_v<T, RentalPrice>) {
          const DbValue p[] = {o.key(), rental_price_document(o).dump()};
          return db.exec(kUpsertRentalPrice, p);
        } else if constexpr (std::is_same_v<T, NodeEnergy>) {
          const DbValue p[] = {o.node_id, o.hour_ms, o.energy_mj};
          return db.exec(kUpsertNodeEnergy, p);
        } else if constexpr (std::is_same_v<T, Pool>) {
          const DbValue p[] = {o.id, o.name, pool_document(o).dump()};
          return db.exec(kUpsertPool, p);
        } else if constexpr (std::is_same_v<T, PoolNode>) {
          const DbValue p[] = {o.id, o.pool_id, std::string(pool_node_state_name(o.state)),
                               pool_node_document(o).dump()};
          return db.exec(kUpsertPoolNode, p);
        } else if constexpr (std::is_same_v<T, SpotRule>) {
          // A deleted rule stays as a row without a curve, which loads as no rule.
          const DbValue p[] = {o.key(), spot_rule_document(o).dump()};
          return db.exec(kUpsertSpotRule, p);
        } else if constexpr (std::is_same_v<T, Latency>) {
          const DbValue p[] = {o.from, o.region, latency_document(o).dump()};
          return db.exec(kUpsertLatency, p);
        } else if constexpr (std::is_same_v<T, RegistryCredential>) {
          const DbValue p[] = {o.tenant_id, o.host, registry_credential_document(o).dump()};
          return db.exec(kUpsertRegistryCredential, p);
        } else if constexpr (std::is_same_v<T, ImagePull>) {
          const DbValue p[] = {o.id, o.created_at_ms, image_pull_document(o).dump()};
          return db.exec(kUpsertImagePull, p);
        } else if constexpr (std::is_same_v<T, Instance>) {
          const DbValue p[] = {o.id,
                               o.tenant_id,
                               o.project_id,
                               std::string(instance_state_name(o.state)),
                               o.created_at_ms,
                               instance_document(o).dump()};
          return db.exec(kUpsertInstance, p);
        } else {
          static_assert(kNoHandlerFor<T>, "a row type the store cannot write");
        }
      },
      row);
}

Status write_audit(Db& db, const AuditEntry& e) {
  const DbValue p[] = {e.seq,    e.at_ms, e.tenant_id, e.user_id,         e.key_id,
                       e.method, e.path,  e.target_id, int64_t{e.status}, e.error_code};
  return db.exec(kInsertAudit, p);
}

// Runs `body` in a transaction: commits when it succeeds, rolls back when it fails.
template <typename Body>
Status in_transaction(Db& db, Body&& body) {
  if (auto ok = db.begin(); !ok) return ok;
  Status result = body();
  if (result) result = db.exec("COMMIT", {});
  if (!result) (void)db.exec("ROLLBACK", {});
  return result;
}

class SqlStore final : public Store {
 public:
  explicit SqlStore(std::unique_ptr<Db> db) : db_(std::move(db)) {}

  Status migrate() {
    if (auto ok =
            db_->exec("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                      "description TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)",
                      {});
        !ok) {
      return ok;
    }
    for (const Migration& m : migrations()) {
      Status applied = in_transaction(*db_, [&]() -> Status {
        // Read the version inside the transaction, so two daemons starting at once on one
        // PostgreSQL cannot both apply it: the second one's insert fails on the primary key.
        auto rows = db_->query("SELECT version FROM schema_migrations WHERE version = $1",
                               std::array<DbValue, 1>{int64_t{m.version}});
        if (!rows) return std::unexpected(rows.error());
        if (!rows->empty()) return {};
        for (std::string_view statement : m.statements) {
          if (auto ok = db_->exec(statement, {}); !ok) return ok;
        }
        const DbValue p[] = {int64_t{m.version}, std::string(m.description),
                             SystemClock().now_ms()};
        return db_->exec(
            "INSERT INTO schema_migrations (version, description, applied_at_ms) "
            "VALUES ($1, $2, $3)",
            p);
      });
      if (!applied) {
        return fail(ErrorCode::kUnavailable, fmt::format("migration {} ({}) failed: {}", m.version,
                                                         m.description, applied.error().message));
      }
      version_ = m.version;
    }
    return {};
  }

  Status commit(const Batch& batch) override {
    if (batch.rows.empty() && batch.audit.empty()) return {};
    return in_transaction(*db_, [&]() -> Status {
      for (const Row& row : batch.rows) {
        if (auto ok = write_row(*db_, row); !ok) return ok;
      }
      for (const AuditEntry& entry : batch.audit) {
        if (auto ok = write_audit(*db_, entry); !ok) return ok;
      }
      return {};
    });
  }

  Result<std::vector<Row>> load() override {
    std::vector<Row> out;
    auto tenants = db_->query(
        "SELECT id, name, is_operator, created_at_ms, weight, billing, credit_limit_micros, "
        "billing_details FROM tenants ORDER BY id",
        {});
    if (!tenants) return std::unexpected(tenants.error());
    for (const DbRow& r : *tenants) {
      out.emplace_back(
          Tenant{.id = db_text(r[0]),
                 .name = db_text(r[1]),
                 .is_operator = db_int(r[2]) != 0,
                 .created_at_ms = db_int(r[3]),
                 .weight = db_int(r[4]),
                 .billing = parse_billing_mode(db_text(r[5])).value_or(BillingMode::kPostpaid),
                 .credit_limit_micros = db_int(r[6]),
                 .details = billing_details_from_text(db_text(r[7]))});
    }
    auto users = db_->query(
        "SELECT id, tenant_id, name, email, role, disabled, created_at_ms FROM users ORDER BY id",
        {});
    if (!users) return std::unexpected(users.error());
    for (const DbRow& r : *users) {
      out.emplace_back(User{.id = db_text(r[0]),
                            .tenant_id = db_text(r[1]),
                            .name = db_text(r[2]),
                            .email = db_text(r[3]),
                            .role = parse_role(db_text(r[4])).value_or(Role::kViewer),
                            .disabled = db_int(r[5]) != 0,
                            .created_at_ms = db_int(r[6])});
    }
    auto projects = db_->query(
        "SELECT id, tenant_id, name, created_at_ms, deleted_at_ms, idle FROM projects ORDER BY id",
        {});
    if (!projects) return std::unexpected(projects.error());
    for (const DbRow& r : *projects) {
      Project project{.id = db_text(r[0]),
                      .tenant_id = db_text(r[1]),
                      .name = db_text(r[2]),
                      .created_at_ms = db_int(r[3]),
                      .deleted_at_ms = db_int(r[4])};
      // Empty: no idle-stop policy (every project written before migration 13).
      if (const std::string idle = db_text(r[5]); !idle.empty()) {
        auto policy = idle_policy_from_document(nlohmann::json::parse(idle, nullptr, false));
        if (!policy) return std::unexpected(policy.error());
        project.idle = *policy;
      }
      out.emplace_back(std::move(project));
    }
    auto keys = db_->query(
        "SELECT id, user_id, tenant_id, name, prefix, token_hash, created_at_ms, revoked_at_ms "
        "FROM api_keys ORDER BY id",
        {});
    if (!keys) return std::unexpected(keys.error());
    for (const DbRow& r : *keys) {
      out.emplace_back(ApiKey{.id = db_text(r[0]),
                              .user_id = db_text(r[1]),
                              .tenant_id = db_text(r[2]),
                              .name = db_text(r[3]),
                              .prefix = db_text(r[4]),
                              .token_hash = db_text(r[5]),
                              .created_at_ms = db_int(r[6]),
                              .revoked_at_ms = db_int(r[7])});
    }
    if (auto ok = load_cluster(out); !ok) return std::unexpected(ok.error());
    return out;
  }

  // Every row of a table of JSON documents, in the order given.
  template <typename Parse>
  Status load_documents(std::string_view table, Parse parse, std::vector<Row>& out,
                        std::string_view order = "id") {
    auto rows = db_->query(fmt::format("SELECT doc FROM {} ORDER BY {}", table, order), {});
    if (!rows) return std::unexpected(rows.error());
    for (const DbRow& r : *rows) {
      auto object = parse(nlohmann::json::parse(db_text(r[0]), nullptr, false));
      if (!object) return std::unexpected(object.error());
      out.emplace_back(std::move(*object));
    }
    return {};
  }

  Status load_books(std::vector<Row>& out) {
    if (auto ok = load_documents("assets", asset_from_document, out); !ok) return ok;
    if (auto ok = load_documents("sites", site_from_document, out, "region"); !ok) return ok;
    if (auto ok = load_documents("fixed_costs", fixed_cost_from_document, out); !ok) return ok;
    if (auto ok = load_documents("rental_prices", rental_price_from_document, out, "key"); !ok) {
      return ok;
    }
    auto energy = db_->query(
        "SELECT node_id, hour_ms, energy_mj FROM node_energy ORDER BY node_id, hour_ms", {});
    if (!energy) return std::unexpected(energy.error());
    for (const DbRow& r : *energy) {
      out.emplace_back(
          NodeEnergy{.node_id = db_text(r[0]), .hour_ms = db_int(r[1]), .energy_mj = db_int(r[2])});
    }
    return {};
  }

  Status load_cluster(std::vector<Row>& out) {
    auto tokens = db_->query(
        "SELECT id, name, token_hash, created_at_ms, expires_at_ms, revoked_at_ms "
        "FROM join_tokens ORDER BY id",
        {});
    if (!tokens) return std::unexpected(tokens.error());
    for (const DbRow& r : *tokens) {
      out.emplace_back(JoinToken{.id = db_text(r[0]),
                                 .name = db_text(r[1]),
                                 .token_hash = db_text(r[2]),
                                 .created_at_ms = db_int(r[3]),
                                 .expires_at_ms = db_int(r[4]),
                                 .revoked_at_ms = db_int(r[5])});
    }
    if (auto ok = load_documents("nodes", node_from_document, out); !ok) return ok;
    if (auto ok = load_documents("quotas", quota_from_document, out); !ok) return ok;
    if (auto ok = load_documents("reservations", reservation_from_document, out); !ok) return ok;
    if (auto ok = load_documents("prices", price_from_document, out,
                                 "gpu_model, region, price_class, effective_at_ms");
        !ok) {
      return ok;
    }
    if (auto ok = load_documents("invoices", invoice_from_document, out); !ok) return ok;
    if (auto ok = load_documents("credit_notes", credit_note_from_document, out); !ok) return ok;
    if (auto ok = load_budget_rows(*db_, out); !ok) return ok;
    if (auto ok = load_books(out); !ok) return ok;
    if (auto ok = load_documents("pools", pool_from_document, out); !ok) return ok;
    if (auto ok = load_documents("pool_nodes", pool_node_from_document, out); !ok) return ok;
    if (auto ok = load_documents("spot_rules", spot_rule_from_document, out, "key"); !ok) return ok;
    if (auto ok = load_documents("latencies", latency_from_document, out, "from_location, region");
        !ok) {
      return ok;
    }
    if (auto ok = load_documents("registry_credentials", registry_credential_from_document, out,
                                 "tenant_id, host");
        !ok) {
      return ok;
    }
    if (auto ok = load_documents("image_pulls", image_pull_from_document, out, "created_at_ms, id");
        !ok) {
      return ok;
    }
    // Oldest first, so that the queue is rebuilt in arrival order.
    return load_documents("instances", instance_from_document, out, "created_at_ms, id");
  }

  Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) override {
    constexpr std::string_view kColumns =
        "SELECT seq, at_ms, tenant_id, user_id, key_id, method, path, target_id, status, "
        "error_code FROM audit_log WHERE seq > $1 ";
    Result<std::vector<DbRow>> rows;
    if (query.tenant_id) {
      const DbValue p[] = {query.after_seq, int64_t{query.limit}, *query.tenant_id};
      rows = db_->query(fmt::format("{}AND tenant_id = $3 ORDER BY seq LIMIT $2", kColumns), p);
    } else {
      const DbValue p[] = {query.after_seq, int64_t{query.limit}};
      rows = db_->query(fmt::format("{}ORDER BY seq LIMIT $2", kColumns), p);
    }
    if (!rows) return std::unexpected(rows.error());
    std::vector<AuditEntry> out;
    out.reserve(rows->size());
    for (const DbRow& r : *rows) {
      out.push_back(AuditEntry{.seq = db_int(r[0]),
                               .at_ms = db_int(r[1]),
                               .tenant_id = db_text(r[2]),
                               .user_id = db_text(r[3]),
                               .key_id = db_text(r[4]),
                               .method = db_text(r[5]),
                               .path = db_text(r[6]),
                               .target_id = db_text(r[7]),
                               .status = static_cast<int>(db_int(r[8])),
                               .error_code = db_text(r[9])});
    }
    return out;
  }

  Result<int64_t> last_audit_seq() override {
    auto rows = db_->query("SELECT COALESCE(MAX(seq), 0) FROM audit_log", {});
    if (!rows) return std::unexpected(rows.error());
    return db_int(rows->at(0).at(0));
  }

  Result<std::vector<StoredEvent>> list_events(const EventQuery& query) override {
    return query_events(*db_, query);
  }

  Result<std::vector<Delivery>> due_deliveries(TimeMs now_ms, int limit) override {
    return query_due_deliveries(*db_, now_ms, limit);
  }

  Status record_delivery_attempt(const DeliveryAttempt& attempt) override {
    return in_transaction(*db_, [&] { return write_delivery_attempt(*db_, attempt); });
  }

  Status put_ledger_accounts(std::span<const ledger::Account> accounts) override {
    return in_transaction(*db_, [&] { return write_ledger_accounts(*db_, accounts); });
  }

  Status append_transfers(std::span<const ledger::Transfer> transfers, int64_t first_seq) override {
    if (transfers.empty()) return {};
    return in_transaction(*db_, [&] { return write_transfers(*db_, transfers, first_seq); });
  }

  Result<ledger::Ledger> load_ledger() override { return read_ledger(*db_); }

  int schema_version() const override { return version_; }
  std::string_view backend() const override { return db_->backend(); }

 private:
  std::unique_ptr<Db> db_;
  int version_ = 0;
};

Result<std::unique_ptr<Store>> open_store(Result<std::unique_ptr<Db>> db) {
  if (!db) return std::unexpected(db.error());
  auto store = std::make_unique<SqlStore>(std::move(*db));
  if (auto ok = store->migrate(); !ok) return std::unexpected(ok.error());
  return store;
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path) {
  return open_store(open_sqlite_db(path));
}

Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url) {
  return open_store(open_postgres_db(url));
}

}  // namespace allot
