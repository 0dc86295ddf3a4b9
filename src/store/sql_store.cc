// The Store, written once over Db for both backends.
#include <fmt/format.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/limits.h"
#include "store/budget_store.h"
#include "store/codecs/codecs.h"
#include "store/codecs/columns.h"
#include "store/db.h"
#include "store/lease.h"
#include "store/ledger_journal.h"
#include "store/migrations.h"
#include "store/store.h"

namespace allot {
namespace {

// Only ever inserted.
constexpr auto kAuditColumns = ALLOT_COLUMNS(AuditEntry, seq, at_ms, tenant_id, user_id, key_id,
                                             method, path, target_id, status, error_code);
constexpr ColumnCodec<AuditEntry> kAudit{
    .table = "audit_log", .columns = kAuditColumns, .conflict = ""};

// Writes a piece, and drops the instance's oldest pieces once it holds more than
// limits::kMaxStoredLogBytes: an instance's output in the store is bounded, its newest kept.
Status write_log_piece(Db& db, const LogPiece& piece) {
  const auto end = piece.offset + static_cast<int64_t>(piece.data.size());
  const DbValue p[] = {piece.instance_id, piece.offset, static_cast<int64_t>(piece.data.size()),
                       base64_encode(piece.data)};
  if (auto ok = db.exec(
          "INSERT INTO instance_logs (instance_id, start_at, size, data) VALUES ($1, $2, $3, $4) "
          "ON CONFLICT (instance_id, start_at) DO NOTHING",
          p);
      !ok) {
    return ok;
  }
  const int64_t keep_from = end - static_cast<int64_t>(limits::kMaxStoredLogBytes);
  if (keep_from <= 0) return {};
  // start_at bounds the walk of the index: no piece is longer than a chunk.
  const DbValue old[] = {piece.instance_id, keep_from};
  return db.exec(
      "DELETE FROM instance_logs WHERE instance_id = $1 AND start_at < $2 AND start_at + size <= "
      "$2",
      old);
}

Status write_any(Db& db, const Row& row) {
  return std::visit([&db](const auto& object) { return write_row(db, object); }, row);
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
    if (batch.rows.empty() && batch.audit.empty() && batch.logs.empty()) return {};
    return write_transaction([&]() -> Status {
      for (const Row& row : batch.rows) {
        if (auto ok = write_any(*db_, row); !ok) return ok;
      }
      for (const AuditEntry& entry : batch.audit) {
        if (auto ok = write_columns(*db_, kAudit, entry); !ok) return ok;
      }
      for (const LogPiece& piece : batch.logs) {
        if (auto ok = write_log_piece(*db_, piece); !ok) return ok;
      }
      return {};
    });
  }

  // Every row type in the order of RowTypes, each through its codec.
  Result<std::vector<Row>> load() override {
    std::vector<Row> out;
    Status loaded;
    for_each_type(RowTypes{}, [&]<typename T>() {
      if (loaded) loaded = load_rows(*db_, Tag<T>{}, out);
    });
    if (!loaded) return std::unexpected(loaded.error());
    return out;
  }

  Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) override {
    const std::string select =
        fmt::format("SELECT {} FROM audit_log WHERE seq > $1 ", column_list(kAudit));
    Result<std::vector<DbRow>> rows;
    if (query.tenant_id) {
      const DbValue p[] = {query.after_seq, int64_t{query.limit}, *query.tenant_id};
      rows = db_->query(fmt::format("{}AND tenant_id = $3 ORDER BY seq LIMIT $2", select), p);
    } else {
      const DbValue p[] = {query.after_seq, int64_t{query.limit}};
      rows = db_->query(fmt::format("{}ORDER BY seq LIMIT $2", select), p);
    }
    if (!rows) return std::unexpected(rows.error());
    std::vector<AuditEntry> out;
    out.reserve(rows->size());
    for (const DbRow& r : *rows) {
      auto entry = read_columns(kAudit, r);
      if (!entry) return std::unexpected(entry.error());
      out.push_back(std::move(*entry));
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
    return write_transaction([&] { return write_delivery_attempt(*db_, attempt); });
  }

  Status put_ledger_accounts(std::span<const ledger::Account> accounts) override {
    return write_transaction([&] { return write_ledger_accounts(*db_, accounts); });
  }

  Status append_transfers(std::span<const ledger::Transfer> transfers, int64_t first_seq) override {
    if (transfers.empty()) return {};
    return write_transaction([&] { return write_transfers(*db_, transfers, first_seq); });
  }

  Result<ledger::Ledger> load_ledger() override { return read_ledger(*db_); }

  Result<int64_t> log_size(const std::string& instance_id) override {
    const DbValue p[] = {instance_id};
    auto rows = db_->query(
        "SELECT start_at + size FROM instance_logs WHERE instance_id = $1 "
        "ORDER BY start_at DESC LIMIT 1",
        p);
    if (!rows) return std::unexpected(rows.error());
    return rows->empty() ? 0 : db_int(rows->front().at(0));
  }

  Result<std::optional<int64_t>> next_log_start(const std::string& instance_id,
                                                int64_t from) override {
    const DbValue p[] = {instance_id, from};
    auto rows = db_->query(
        "SELECT start_at FROM instance_logs WHERE instance_id = $1 AND start_at >= $2 "
        "ORDER BY start_at LIMIT 1",
        p);
    if (!rows) return std::unexpected(rows.error());
    if (rows->empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(db_int(rows->front().at(0)));
  }

  Result<std::vector<LogPiece>> read_log(const std::string& instance_id, int64_t from,
                                         int64_t to) override {
    // No piece is longer than a chunk, so one that reaches `from` starts less than a chunk
    // before it: the lower bound keeps the walk of the index short.
    const DbValue p[] = {instance_id, from, to,
                         from - static_cast<int64_t>(limits::kMaxLogChunkBytes)};
    auto rows = db_->query(
        "SELECT start_at, data FROM instance_logs WHERE instance_id = $1 AND start_at >= $4 "
        "AND start_at < $3 AND start_at + size > $2 ORDER BY start_at",
        p);
    if (!rows) return std::unexpected(rows.error());
    std::vector<LogPiece> out;
    out.reserve(rows->size());
    for (const DbRow& r : *rows) {
      auto data = base64_decode(db_text(r.at(1)));
      if (!data) return fail(ErrorCode::kInternal, "a stored log piece is not base64");
      out.push_back(LogPiece{
          .instance_id = instance_id, .offset = db_int(r.at(0)), .data = std::move(*data)});
    }
    return out;
  }

  void set_fence(std::optional<Fence> fence) override { fence_ = std::move(fence); }

  int schema_version() const override { return version_; }
  std::string_view backend() const override { return db_->backend(); }

 private:
  // A transaction that writes: fenced by the lease, when there is one, before `body` runs.
  template <typename Body>
  Status write_transaction(Body&& body) {
    return in_transaction(*db_, [&]() -> Status {
      if (fence_) {
        if (auto ok = check_fence(*db_, *fence_); !ok) return ok;
      }
      return body();
    });
  }

  std::optional<Fence> fence_;
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
