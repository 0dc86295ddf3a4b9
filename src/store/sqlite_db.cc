// SQLite backend of Db: one connection in WAL mode with synchronous=FULL, so that a committed
// transaction has reached the disk before commit returns.
#include <sqlite3.h>

#include <map>

#include <fmt/format.h>

#include "store/db.h"

namespace allot {
namespace {

// SQLite numbers parameters ?1, ?2, ...; the store writes $1, $2, ... for both backends.
std::string to_sqlite_parameters(std::string_view sql) {
  std::string out(sql);
  for (char& c : out) {
    if (c == '$') c = '?';
  }
  return out;
}

class SqliteDb final : public Db {
 public:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb() override {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }

  Status exec(std::string_view sql, std::span<const DbValue> params) override {
    auto rows = run(sql, params, false);
    if (!rows) return std::unexpected(rows.error());
    return {};
  }

  Result<std::vector<DbRow>> query(std::string_view sql, std::span<const DbValue> params) override {
    return run(sql, params, true);
  }

  Status begin() override { return exec("BEGIN IMMEDIATE", {}); }
  std::string_view backend() const override { return "sqlite"; }

 private:
  Error error(std::string_view sql) const {
    return Error{ErrorCode::kUnavailable,
                 fmt::format("sqlite: {} (in: {})", sqlite3_errmsg(db_), sql.substr(0, 80))};
  }

  Result<sqlite3_stmt*> prepare(std::string_view sql) {
    std::string key(sql);
    if (auto it = statements_.find(key); it != statements_.end()) return it->second;
    sqlite3_stmt* statement = nullptr;
    const std::string text = to_sqlite_parameters(sql);
    if (sqlite3_prepare_v2(db_, text.c_str(), static_cast<int>(text.size()), &statement, nullptr) !=
        SQLITE_OK) {
      return std::unexpected(error(sql));
    }
    statements_.emplace(std::move(key), statement);
    return statement;
  }

  Status bind(sqlite3_stmt* statement, std::span<const DbValue> params) {
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      int rc = SQLITE_OK;
      if (const auto* number = std::get_if<int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(statement, index, *number);
      } else if (const auto* text = std::get_if<std::string>(&params[i])) {
        rc = sqlite3_bind_text(statement, index, text->data(), static_cast<int>(text->size()),
                               SQLITE_TRANSIENT);
      } else {
        rc = sqlite3_bind_null(statement, index);
      }
      if (rc != SQLITE_OK) return std::unexpected(error("bind"));
    }
    return {};
  }

  static DbValue column(sqlite3_stmt* statement, int i) {
    switch (sqlite3_column_type(statement, i)) {
      case SQLITE_INTEGER:
        return sqlite3_column_int64(statement, i);
      case SQLITE_NULL:
        return std::monostate{};
      default: {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, i));
        return std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement, i)));
      }
    }
  }

  Result<std::vector<DbRow>> run(std::string_view sql, std::span<const DbValue> params,
                                 bool want_rows) {
    auto statement = prepare(sql);
    if (!statement) return std::unexpected(statement.error());
    sqlite3_stmt* s = *statement;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (auto ok = bind(s, params); !ok) return std::unexpected(ok.error());
    std::vector<DbRow> rows;
    for (;;) {
      const int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        Error e = error(sql);
        sqlite3_reset(s);
        return std::unexpected(std::move(e));
      }
      if (!want_rows) continue;
      DbRow row;
      const int columns = sqlite3_column_count(s);
      row.reserve(static_cast<size_t>(columns));
      for (int i = 0; i < columns; ++i) row.push_back(column(s, i));
      rows.push_back(std::move(row));
    }
    sqlite3_reset(s);
    return rows;
  }

  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

}  // namespace

Result<std::unique_ptr<Db>> open_sqlite_db(const std::string& path) {
  sqlite3* handle = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &handle, flags, nullptr) != SQLITE_OK) {
    std::string message = handle != nullptr ? sqlite3_errmsg(handle) : "out of memory";
    sqlite3_close(handle);
    return fail(ErrorCode::kUnavailable, fmt::format("sqlite: cannot open {}: {}", path, message));
  }
  auto db = std::make_unique<SqliteDb>(handle);
  // WAL lets readers run beside the writer; synchronous=FULL fsyncs the log at every commit, which
  // is what makes an acknowledged write survive a power cut.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                             "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000"}) {
    if (auto ok = db->query(pragma, {}); !ok) return std::unexpected(ok.error());
  }
  return db;
}

}  // namespace allot
