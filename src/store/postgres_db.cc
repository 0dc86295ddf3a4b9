// PostgreSQL backend of Db over libpq. Parameters travel as text; PostgreSQL's default
// synchronous_commit=on makes a commit durable before it returns.
#include <libpq-fe.h>

#include <fmt/format.h>

#include "store/db.h"

namespace allot {
namespace {

class PostgresDb final : public Db {
 public:
  explicit PostgresDb(PGconn* conn) : conn_(conn) {}
  PostgresDb(const PostgresDb&) = delete;
  PostgresDb& operator=(const PostgresDb&) = delete;
  ~PostgresDb() override { PQfinish(conn_); }

  Status exec(std::string_view sql, std::span<const DbValue> params) override {
    auto rows = run(sql, params);
    if (!rows) return std::unexpected(rows.error());
    return {};
  }

  Result<std::vector<DbRow>> query(std::string_view sql, std::span<const DbValue> params) override {
    return run(sql, params);
  }

  Status begin() override { return exec("BEGIN", {}); }
  std::string_view backend() const override { return "postgres"; }

 private:
  Result<std::vector<DbRow>> run(std::string_view sql, std::span<const DbValue> params) {
    // A dropped connection is reopened once; the failed statement's transaction is gone with it,
    // so the caller sees an error and retries the whole batch.
    if (PQstatus(conn_) == CONNECTION_BAD) PQreset(conn_);
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (std::holds_alternative<std::monostate>(params[i])) continue;
      texts[i] = db_text(params[i]);
      values[i] = texts[i].c_str();
    }
    const std::string text(sql);
    PGresult* result = PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                    values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      Error e{ErrorCode::kUnavailable,
              fmt::format("postgres: {} (in: {})", PQerrorMessage(conn_), sql.substr(0, 80))};
      PQclear(result);
      return std::unexpected(std::move(e));
    }
    std::vector<DbRow> rows;
    const int count = PQntuples(result);
    const int columns = PQnfields(result);
    rows.reserve(static_cast<size_t>(count));
    for (int r = 0; r < count; ++r) {
      DbRow row;
      row.reserve(static_cast<size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result, r, c) != 0) {
          row.emplace_back(std::monostate{});
        } else {
          row.emplace_back(std::string(PQgetvalue(result, r, c),
                                       static_cast<size_t>(PQgetlength(result, r, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(result);
    return rows;
  }

  PGconn* conn_;
};

}  // namespace

Result<std::unique_ptr<Db>> open_postgres_db(const std::string& url) {
  // Without deadlines a database that went silent (a partition, a host gone) would hold a commit
  // for as long as TCP retries, minutes. These apply unless the URL sets its own: the URL is
  // expanded after them, and what comes later wins.
  const char* const keys[] = {"connect_timeout",
                              "tcp_user_timeout",
                              "keepalives_idle",
                              "keepalives_interval",
                              "keepalives_count",
                              "dbname",
                              nullptr};
  const char* const values[] = {"10", "10000", "5", "2", "3", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    return fail(ErrorCode::kUnavailable, fmt::format("postgres: cannot connect: {}", message));
  }
  auto db = std::make_unique<PostgresDb>(conn);
  if (auto ok = db->exec("SET client_min_messages TO warning", {}); !ok) {
    return std::unexpected(ok.error());
  }
  return db;
}

}  // namespace allot
