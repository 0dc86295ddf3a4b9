// A fresh PostgreSQL database per test, on the server that the test command started
// (scripts/with-postgres.sh exports ALLOT_TEST_POSTGRES_URL). Without that server the PostgreSQL
// cases are skipped, unless ALLOT_REQUIRE_POSTGRES=1 says they must run, as in CI.
#pragma once

#include <optional>
#include <string>

namespace allot::testing {

// Whether a test server is configured; fails the calling test when it is required but missing.
bool postgres_available();

// Creates an empty database and returns its URL, or nullopt (after failing the test) on error.
std::optional<std::string> new_postgres_database();

}  // namespace allot::testing
