// Tenants' credentials for private image registries. Tenant admins (and operator admins, for any
// tenant) set and delete them; any key of the tenant lists them. The password is sealed here with
// allotd's key before the core sees it, and is never shown again: not in answers, the audit log
// (which keeps no bodies) or the store.
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "common/limits.h"

namespace allot {
namespace {

using nlohmann::json;

constexpr size_t kMaxPasswordBytes = 4096;

json registry_json(const RegistryCredential& c) {
  return {{"tenant_id", c.tenant_id},
          {"host", c.host},
          {"username", c.username},
          {"updated_at", format_time(c.updated_at_ms)}};
}

Result<const Sealer*> sealer_of(const Call& call) {
  if (!call.options.sealer) {
    return fail(ErrorCode::kUnavailable, "this allotd has no secrets key to seal credentials");
  }
  return call.options.sealer.get();
}

// PUT /v1/registries {"host", "username", "password"[, "tenant_id"]}: sets the tenant's credential
// for that registry, replacing the one there is.
Result<HttpResponse> set_registry(Call& call) {
  JsonBody body(call.request.body);
  const auto [host, username, password] =
      body.required_string_fields({"host", "username", "password"});
  auto tenant_id = body.optional_string("tenant_id");
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const std::string tenant, tenant_for(call, tenant_id));
  ALLOT_TRY(require_admin_of(call.caller, tenant));
  if (password.empty() || password.size() > kMaxPasswordBytes ||
      password.find_first_of(std::string_view("\0\r\n", 3)) != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("password must be 1 to {} bytes, without NUL bytes or line breaks",
                            kMaxPasswordBytes));
  }
  ALLOT_TRY_LET(const auto sealer, sealer_of(call));
  RegistryCredential credential{.tenant_id = tenant, .host = host, .username = username};
  ALLOT_TRY_ASSIGN(credential.sealed_password,
                   sealer->seal(password, credential.sealing_context()));
  ALLOT_TRY(call.ctx.apply(SetRegistryCredential{std::move(credential)}));
  call.target_id = host;
  return json_reply(200, registry_json(*call.ctx.state().registry_credential(tenant, host)));
}

// GET /v1/registries[?tenant_id=]: the credentials' hosts and usernames, never their passwords.
Result<HttpResponse> list_registries(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  return page_of(
      call.ctx.state().registry_credentials, page,
      [&](const RegistryCredential& c) {
        return may_see_tenant(call.caller, c.tenant_id) && (!tenant || c.tenant_id == *tenant);
      },
      registry_json);
}

// DELETE /v1/registries/{host}[?tenant_id=]
Result<HttpResponse> delete_registry(Call& call) {
  const auto named = call.target.query.find("tenant_id");
  ALLOT_TRY_LET(const std::string tenant,
                tenant_for(call, named == call.target.query.end()
                                     ? std::nullopt
                                     : std::optional<std::string>(named->second)));
  ALLOT_TRY(require_admin_of(call.caller, tenant));
  const std::string& host = call.params.front();
  const RegistryCredential* before = call.ctx.state().registry_credential(tenant, host);
  if (before == nullptr) return fail(ErrorCode::kNotFound, "no registry credential for " + host);
  json out = registry_json(*before);
  ALLOT_TRY(call.ctx.apply(DeleteRegistryCredential{.tenant_id = tenant, .host = host}));
  out["deleted_at"] = format_time(call.ctx.now_ms());
  return json_reply(200, out);
}

constexpr Resource kResources[] = {
    {.path = "/v1/registries",
     .put = set_registry,
     .list = list_registries,
     .remove = delete_registry,
     .item = "/{host}"},
};

}  // namespace

std::span<const Route> registry_routes() { return route_table<kResources>(); }

}  // namespace allot
