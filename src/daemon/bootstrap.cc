#include "daemon/bootstrap.h"

#include "common/limits.h"

namespace allot {

Result<std::optional<std::string>> bootstrap(Core& core, Store& store, IdSource& ids, TimeMs now_ms,
                                             const std::string& admin_key) {
  for (const auto& [id, tenant] : core.state().tenants) {
    if (tenant.is_operator) return std::nullopt;
  }
  if (!admin_key.empty() &&
      (admin_key.size() < limits::kMinKeyBytes || admin_key.size() > limits::kMaxKeyBytes)) {
    return fail(ErrorCode::kInvalidArgument, "ALLOT_ADMIN_KEY must be 24 to 256 characters");
  }
  std::string key = admin_key.empty() ? ids.new_secret() : admin_key;
  const std::string tenant_id = ids.new_id("ten");
  const std::string user_id = ids.new_id("usr");
  const Command commands[] = {
      CreateTenant{.id = tenant_id, .name = "operator", .is_operator = true},
      CreateUser{.id = user_id,
                 .tenant_id = tenant_id,
                 .name = "admin",
                 .email = "admin@localhost",
                 .role = Role::kOperatorAdmin},
      CreateKey{.id = ids.new_id("key"),
                .user_id = user_id,
                .name = "bootstrap",
                .prefix = key.substr(0, 12),
                .token_hash = sha256_hex(key)},
  };
  Batch batch;
  // A fresh core cannot refuse these; should one fail, nothing has been written yet.
  for (const Command& command : commands) {
    auto rows = core.apply(command, now_ms);
    if (!rows) return std::unexpected(rows.error());
    batch.rows.insert(batch.rows.end(), rows->begin(), rows->end());
  }
  if (auto ok = store.commit(batch); !ok) return std::unexpected(ok.error());
  // A key the operator gave is theirs already: it is not printed where logs keep it.
  return admin_key.empty() ? key : std::string();
}

}  // namespace allot
