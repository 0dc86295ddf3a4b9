// A minimal SQL connection, implemented once for SQLite and once for libpq, so that the store's
// statements and migrations are written a single time. Statements number their parameters: $1, $2.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/error.h"

namespace allot {

using DbValue = std::variant<std::monostate, int64_t, std::string>;
using DbRow = std::vector<DbValue>;

// Column readers that accept what either backend returns (PostgreSQL gives text).
int64_t db_int(const DbValue& value);
std::string db_text(const DbValue& value);

class Db {
 public:
  virtual ~Db() = default;
  // Runs one statement. Errors are kUnavailable with the database's message.
  [[nodiscard]] virtual Status exec(std::string_view sql, std::span<const DbValue> params = {}) = 0;
  [[nodiscard]] virtual Result<std::vector<DbRow>> query(std::string_view sql,
                                                         std::span<const DbValue> params = {}) = 0;
  // Opens a write transaction that excludes other writers until commit or rollback.
  [[nodiscard]] virtual Status begin() = 0;
  virtual std::string_view backend() const = 0;
};

[[nodiscard]] Result<std::unique_ptr<Db>> open_sqlite_db(const std::string& path);
[[nodiscard]] Result<std::unique_ptr<Db>> open_postgres_db(const std::string& url);

}  // namespace allot
