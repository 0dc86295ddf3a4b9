// The identity domain's rows in the store: tenants, projects, users, API keys.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

[[nodiscard]] Status write_row(Db& db, const Tenant& tenant);
[[nodiscard]] Status load_rows(Db& db, Tag<Tenant> tag, std::vector<Row>& out);
[[nodiscard]] Status write_row(Db& db, const Project& project);
[[nodiscard]] Status load_rows(Db& db, Tag<Project> tag, std::vector<Row>& out);
[[nodiscard]] Status write_row(Db& db, const User& user);
[[nodiscard]] Status load_rows(Db& db, Tag<User> tag, std::vector<Row>& out);
[[nodiscard]] Status write_row(Db& db, const ApiKey& key);
[[nodiscard]] Status load_rows(Db& db, Tag<ApiKey> tag, std::vector<Row>& out);

}  // namespace allot
