#include "support/postgres.h"

#include <libpq-fe.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace allot::testing {
namespace {

std::string base_url() {
  const char* url = std::getenv("ALLOT_TEST_POSTGRES_URL");
  return url == nullptr ? std::string{} : std::string(url);
}

}  // namespace

bool postgres_available() {
  if (!base_url().empty()) return true;
  const char* required = std::getenv("ALLOT_REQUIRE_POSTGRES");
  if (required != nullptr && std::string_view(required) == "1") {
    ADD_FAILURE() << "ALLOT_REQUIRE_POSTGRES=1 but ALLOT_TEST_POSTGRES_URL is not set";
  }
  return false;
}

std::optional<std::string> new_postgres_database() {
  static std::atomic<int> counter{0};
  const std::string base = base_url();
  const std::string name = fmt::format("allot_test_{}_{}", getpid(), counter++);
  PGconn* conn = PQconnectdb(base.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot connect to " << base << ": " << PQerrorMessage(conn);
    PQfinish(conn);
    return std::nullopt;
  }
  PGresult* result = PQexec(conn, fmt::format("CREATE DATABASE {}", name).c_str());
  const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
  if (!ok) ADD_FAILURE() << "CREATE DATABASE failed: " << PQerrorMessage(conn);
  PQclear(result);
  PQfinish(conn);
  if (!ok) return std::nullopt;
  // The base URL ends in a database name; swap it for the new one.
  const size_t slash = base.rfind('/');
  const size_t query = base.find('?', slash);
  return base.substr(0, slash + 1) + name + (query == std::string::npos ? "" : base.substr(query));
}

}  // namespace allot::testing
