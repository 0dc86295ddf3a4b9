// Tenants, projects, users, API keys and the audit log.
#include <algorithm>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/identity.h"
#include "api/routes_util.h"
#include "api/wire/identity.h"
#include "core/kernel/validate.h"
#include "core/money/invoices.h"

namespace allot {

// The tenant a new object goes in: the one named, if the caller may see it, else the caller's.
Result<std::string> tenant_for(const Call& call, const std::optional<std::string>& tenant_id) {
  if (!tenant_id) return call.caller.tenant_id;
  ALLOT_TRY(check_id("tenant_id", *tenant_id, "ten"));
  if (!may_see_tenant(call.caller, *tenant_id) || call.ctx.state().tenant(*tenant_id) == nullptr) {
    return fail(ErrorCode::kNotFound, fmt::format("no tenant {}", *tenant_id));
  }
  return *tenant_id;
}

// An optional ?tenant_id= filter on a listing, checked like tenant_for.
Result<std::optional<std::string>> tenant_filter(const Call& call) {
  auto it = call.target.query.find("tenant_id");
  if (it == call.target.query.end()) {
    if (call.caller.is_operator_admin()) return std::optional<std::string>{};
    return std::optional<std::string>{call.caller.tenant_id};
  }
  ALLOT_TRY_LET(std::string tenant, tenant_for(call, it->second));
  return std::optional<std::string>{std::move(tenant)};
}

// The project a new object goes in: the one named, or the caller's tenant's only live project.
Result<const Project*> project_for(const Call& call, const std::optional<std::string>& id) {
  const State& state = call.ctx.state();
  if (id) {
    ALLOT_TRY(check_id("project_id", *id, "prj"));
    const Project* project = state.project(*id);
    if (project == nullptr || project->deleted_at_ms != 0 ||
        !may_see_tenant(call.caller, project->tenant_id)) {
      return fail(ErrorCode::kNotFound, "no project " + *id);
    }
    return project;
  }
  const Project* only = nullptr;
  for (const auto& [pid, project] : state.projects) {
    if (project.tenant_id != call.caller.tenant_id || project.deleted_at_ms != 0) continue;
    if (only != nullptr) {
      return fail(ErrorCode::kMissingField, "'project_id' is required: the tenant has several");
    }
    only = &project;
  }
  if (only == nullptr) return fail(ErrorCode::kMissingField, "'project_id' is required");
  return only;
}

Status require_launcher(const Caller& caller) {
  if (caller.role == Role::kViewer) {
    return fail(ErrorCode::kForbidden,
                "viewers cannot launch or stop instances, or make or delete volumes");
  }
  return {};
}

namespace {

using nlohmann::json;

// Looks up the object a path names, answering kNotFound for what the caller may not see.
template <typename T>
Result<const T*> visible_object(const Call& call, const T* object, std::string_view what) {
  if (object == nullptr || !may_see_tenant(call.caller, object->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no {} {}", what, call.params.front()));
  }
  return object;
}

// --- whoami and tenants ---

Result<HttpResponse> whoami(Call& call) {
  const State& state = call.ctx.state();
  return json_reply(200, {{"user", to_json(*state.user(call.caller.user_id))},
                          {"tenant", to_json(*state.tenant(call.caller.tenant_id))},
                          {"key_id", call.caller.key_id}});
}

Result<HttpResponse> create_tenant(Call& call) {
  JsonBody body(call.request.body);
  std::string name = body.required_string("name");
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string id = call.ctx.ids().new_id("ten");
  ALLOT_TRY(call.ctx.apply(CreateTenant{.id = id, .name = name}));
  call.target_id = id;
  return json_reply(201, to_json(*call.ctx.state().tenant(id)));
}

Result<HttpResponse> list_tenants(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  return page_of(call.ctx.state().tenants, page,
                 [&](const Tenant& t) { return may_see_tenant(call.caller, t.id); });
}

Result<HttpResponse> get_tenant(Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("tenant id", id, "ten"));
  const Tenant* tenant = call.ctx.state().tenant(id);
  if (tenant == nullptr || !may_see_tenant(call.caller, id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no tenant {}", id));
  }
  return json_reply(200, to_json(*tenant));
}

// The billing details a PATCH names over the tenant's current ones: each field given replaces
// that one ("" clears it); a field of another name is refused.
Result<BillingDetails> read_billing_details(const std::map<std::string, std::string>& fields,
                                            BillingDetails details) {
  for (const auto& [name, value] : fields) {
    const auto* field = std::ranges::find(kBillingDetailsFields, name, &BillingDetailsField::name);
    if (field == std::end(kBillingDetailsFields)) {
      return fail(ErrorCode::kUnknownField,
                  fmt::format("billing_details has no field '{}' (legal_name, address, tax_id, "
                              "email)",
                              name));
    }
    details.*(field->member) = value;
  }
  return details;
}

// The operator sets a tenant's fair-share weight, how it pays, its billing details, and whether
// its members may exec into its instances.
Result<HttpResponse> update_tenant(Call& call) {
  JsonBody body(call.request.body);
  auto weight = body.optional_int("weight", INT64_MIN, INT64_MAX);
  auto [billing, credit_limit] = body.optional_string_fields({"billing", "credit_limit"});
  auto details = body.optional_string_map("billing_details");
  auto exec = body.optional_bool("exec");
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("tenant id", id, "ten"));
  if (call.ctx.state().tenant(id) == nullptr) {
    return fail(ErrorCode::kNotFound, fmt::format("no tenant {}", id));
  }
  std::optional<SetBillingDetails> set_details;
  if (details) {
    ALLOT_TRY_LET(BillingDetails read,
                  read_billing_details(*details, call.ctx.state().tenant(id)->details));
    set_details = SetBillingDetails{.tenant_id = id, .details = std::move(read)};
    // Checked before anything is applied, so that a refusal changes nothing.
    ALLOT_TRY(check_billing_details(call.ctx.state(), *set_details));
  }
  // Billing first: it is the change that may be refused, and a refusal must change nothing.
  ALLOT_TRY(apply_billing_change(call, id, billing, credit_limit));
  if (set_details) ALLOT_TRY(call.ctx.apply(*set_details));
  if (weight) ALLOT_TRY(call.ctx.apply(SetTenantWeight{.tenant_id = id, .weight = *weight}));
  if (exec) ALLOT_TRY(call.ctx.apply(SetTenantExec{.tenant_id = id, .allowed = *exec}));
  return json_reply(200, to_json(*call.ctx.state().tenant(id)));
}

// --- projects ---

Result<HttpResponse> create_project(Call& call) {
  JsonBody body(call.request.body);
  std::string name = body.required_string("name");
  auto tenant_id = body.optional_string("tenant_id");
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const std::string tenant, tenant_for(call, tenant_id));
  ALLOT_TRY(require_admin_of(call.caller, tenant));
  const std::string id = call.ctx.ids().new_id("prj");
  ALLOT_TRY(call.ctx.apply(CreateProject{.id = id, .tenant_id = tenant, .name = name}));
  call.target_id = id;
  return json_reply(201, to_json(*call.ctx.state().project(id)));
}

Result<HttpResponse> list_projects(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "include_deleted"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  const bool include_deleted = call.target.query.contains("include_deleted");
  return page_of(call.ctx.state().projects, page, [&](const Project& p) {
    return may_see_tenant(call.caller, p.tenant_id) && (!tenant || p.tenant_id == *tenant) &&
           (include_deleted || p.deleted_at_ms == 0);
  });
}

Result<const Project*> path_project(const Call& call) {
  ALLOT_TRY(check_id("project id", call.params.front(), "prj"));
  return visible_object(call, call.ctx.state().project(call.params.front()), "project");
}

Result<HttpResponse> delete_project(Call& call) {
  ALLOT_TRY_LET(const Project* project, path_project(call));
  ALLOT_TRY(require_admin_of(call.caller, project->tenant_id));
  const std::string id = project->id;
  ALLOT_TRY(call.ctx.apply(DeleteProject{.id = id}));
  return json_reply(200, to_json(*call.ctx.state().project(id)));
}

// --- users ---

Result<Role> read_role(const std::string& text, const Caller& caller) {
  auto role = parse_role(text);
  if (!role) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("role must be operator-admin, tenant-admin, member or viewer, not '{}'", text));
  }
  if (*role == Role::kOperatorAdmin) ALLOT_TRY(require_operator_admin(caller));
  return *role;
}

Result<HttpResponse> create_user(Call& call) {
  JsonBody body(call.request.body);
  auto [name, email] = body.required_string_fields({"name", "email"});
  auto [role_text, tenant_id] = body.optional_string_fields({"role", "tenant_id"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const std::string tenant, tenant_for(call, tenant_id));
  ALLOT_TRY(require_admin_of(call.caller, tenant));
  ALLOT_TRY_LET(const Role role, read_role(role_text.value_or("member"), call.caller));
  const std::string id = call.ctx.ids().new_id("usr");
  ALLOT_TRY(call.ctx.apply(
      CreateUser{.id = id, .tenant_id = tenant, .name = name, .email = email, .role = role}));
  call.target_id = id;
  return json_reply(201, to_json(*call.ctx.state().user(id)));
}

Result<HttpResponse> list_users(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  return page_of(call.ctx.state().users, page, [&](const User& u) {
    return may_see_tenant(call.caller, u.tenant_id) && (!tenant || u.tenant_id == *tenant);
  });
}

Result<const User*> path_user(const Call& call) {
  ALLOT_TRY(check_id("user id", call.params.front(), "usr"));
  return visible_object(call, call.ctx.state().user(call.params.front()), "user");
}

Result<HttpResponse> update_user(Call& call) {
  JsonBody body(call.request.body);
  auto [name, role_text] = body.optional_string_fields({"name", "role"});
  auto disabled = body.optional_bool("disabled");
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const User* user, path_user(call));
  ALLOT_TRY(require_admin_of(call.caller, user->tenant_id));
  UpdateUser command{.id = user->id, .name = name, .disabled = disabled};
  if (role_text) {
    ALLOT_TRY_ASSIGN(command.role, read_role(*role_text, call.caller));
  }
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, to_json(*call.ctx.state().user(command.id)));
}

// --- keys ---

// Whether the caller may see and revoke this key: their own, or any in a tenant they administer.
bool may_manage_key(const Caller& caller, const ApiKey& key) {
  return key.user_id == caller.user_id ||
         (may_see_tenant(caller, key.tenant_id) &&
          (caller.is_operator_admin() || caller.role == Role::kTenantAdmin));
}

Result<HttpResponse> create_key(Call& call) {
  JsonBody body(call.request.body);
  std::string name = body.required_string("name");
  auto user_id = body.optional_string("user_id").value_or(call.caller.user_id);
  ALLOT_TRY(body.finish());
  ALLOT_TRY(check_id("user_id", user_id, "usr"));
  const User* user = call.ctx.state().user(user_id);
  if (user == nullptr || !may_see_tenant(call.caller, user->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no user {}", user_id));
  }
  if (user_id != call.caller.user_id) ALLOT_TRY(require_admin_of(call.caller, user->tenant_id));
  const std::string id = call.ctx.ids().new_id("key");
  const std::string secret = call.ctx.ids().new_secret();
  ALLOT_TRY(call.ctx.apply(CreateKey{.id = id,
                                     .user_id = user_id,
                                     .name = name,
                                     .prefix = secret.substr(0, 12),
                                     .token_hash = sha256_hex(secret)}));
  call.target_id = id;
  json out = to_json(*call.ctx.state().key(id));
  out["secret"] = secret;
  return json_reply(201, out);
}

Result<HttpResponse> list_keys(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"user_id"}));
  auto user = call.target.query.find("user_id");
  return page_of(call.ctx.state().keys, page, [&](const ApiKey& k) {
    return may_manage_key(call.caller, k) &&
           (user == call.target.query.end() || k.user_id == user->second);
  });
}

Result<const ApiKey*> path_key(const Call& call) {
  ALLOT_TRY(check_id("key id", call.params.front(), "key"));
  const ApiKey* key = call.ctx.state().key(call.params.front());
  if (key == nullptr || !may_manage_key(call.caller, *key)) {
    return fail(ErrorCode::kNotFound, fmt::format("no key {}", call.params.front()));
  }
  return key;
}

Result<HttpResponse> revoke_key(Call& call) {
  ALLOT_TRY_LET(const ApiKey* key, path_key(call));
  const std::string id = key->id;
  ALLOT_TRY(call.ctx.apply(RevokeKey{.id = id}));
  return json_reply(200, to_json(*call.ctx.state().key(id)));
}

// --- audit ---

Result<HttpResponse> list_audit(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  if (tenant) {
    ALLOT_TRY(require_admin_of(call.caller, *tenant));
  } else {
    ALLOT_TRY(require_operator_admin(call.caller));
  }
  ALLOT_TRY_LET(const int64_t after, read_seq_after(page));
  ALLOT_TRY_LET(std::vector<AuditEntry> entries,
                call.ctx.store().list_audit(
                    AuditQuery{.tenant_id = tenant, .after_seq = after, .limit = page.limit + 1}));
  return log_page(
      std::move(entries), page.limit, [](const AuditEntry& e) { return to_json(e); },
      [](const AuditEntry& e) { return e.seq; });
}

constexpr Resource kResources[] = {
    {.path = "/v1/tenants",
     .create = create_tenant,
     .list = list_tenants,
     .get = get_tenant,
     .update = update_tenant},
    {.path = "/v1/projects",
     .create = create_project,
     .list = list_projects,
     .get = get_found<path_project>,
     .remove = delete_project},
    {.path = "/v1/users",
     .create = create_user,
     .list = list_users,
     .get = get_found<path_user>,
     .update = update_user},
    {.path = "/v1/keys",
     .create = create_key,
     .list = list_keys,
     .get = get_found<path_key>,
     .remove = revoke_key},
};

constexpr Route kMore[] = {
    {"GET", "/v1/whoami", whoami},
    {"GET", "/v1/audit", list_audit},
};

}  // namespace

std::span<const Route> identity_routes() { return route_table<kResources, kMore>(); }

}  // namespace allot
