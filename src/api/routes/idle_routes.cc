// Idle stop through the API: a project's policy (PUT, GET, DELETE /v1/projects/{id}/idle), and
// the reader of a policy that POST /v1/instances takes as "idle". The core checks the values.
#include <fmt/format.h>

#include "api/app.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "api/wire/cluster.h"
#include "common/json_depth.h"
#include "core/kernel/validate.h"

namespace allot {

Result<IdlePolicy> read_idle_policy(const nlohmann::json& value) {
  if (!value.is_object()) {
    return fail(ErrorCode::kInvalidType,
                "an idle policy must be an object: {\"threshold_pct\", \"window_s\", \"action\"}");
  }
  JsonBody body(value.dump());
  auto threshold = body.optional_int("threshold_pct", INT32_MIN, INT32_MAX);
  auto window = body.optional_int("window_s", INT64_MIN, INT64_MAX);
  auto action_name = body.optional_string("action");
  ALLOT_TRY(body.finish());
  if (!threshold) return fail(ErrorCode::kMissingField, "'threshold_pct' is required");
  if (!window) return fail(ErrorCode::kMissingField, "'window_s' is required");
  IdlePolicy policy{.threshold_pct = static_cast<int>(*threshold), .window_s = *window};
  if (action_name) {
    auto action = parse_idle_action(*action_name);
    if (!action) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("'action' must be stop or notify, not '{}'", *action_name));
    }
    policy.action = *action;
  }
  return policy;
}

namespace {

using nlohmann::json;

json project_idle_json(const Project& project) {
  return {{"project_id", project.id},
          {"idle", project.idle ? to_json(*project.idle) : json(nullptr)}};
}

// The project the path names, if the caller may see it.
Result<const Project*> idle_project(const Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("project id", id, "prj"));
  const Project* project = call.ctx.state().project(id);
  if (project == nullptr || project->deleted_at_ms != 0 ||
      !may_see_tenant(call.caller, project->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no project {}", id));
  }
  return project;
}

Result<HttpResponse> get_idle(Call& call) {
  ALLOT_TRY_LET(const Project* project, idle_project(call));
  return json_reply(200, project_idle_json(*project));
}

// Sets (policy) or clears (none) the project's policy; tenant admins only.
Result<HttpResponse> change_idle(Call& call, const std::optional<IdlePolicy>& policy) {
  ALLOT_TRY_LET(const Project* project, idle_project(call));
  ALLOT_TRY(require_admin_of(call.caller, project->tenant_id));
  const std::string id = project->id;
  ALLOT_TRY(call.ctx.apply(SetProjectIdle{.project_id = id, .policy = policy}));
  call.target_id = id;
  return json_reply(200, project_idle_json(*call.ctx.state().project(id)));
}

Result<HttpResponse> put_idle(Call& call) {
  const json body = parse_outside_json(call.request.body);
  if (body.is_discarded()) return fail(ErrorCode::kMalformedJson, "the body is not valid JSON");
  if (!body.is_object()) return fail(ErrorCode::kMalformedJson, "the body must be a JSON object");
  ALLOT_TRY_LET(const IdlePolicy policy, read_idle_policy(body));
  return change_idle(call, policy);
}

Result<HttpResponse> delete_idle(Call& call) { return change_idle(call, std::nullopt); }

constexpr Route kRoutes[] = {
    {"GET", "/v1/projects/{id}/idle", get_idle},
    {"PUT", "/v1/projects/{id}/idle", put_idle},
    {"DELETE", "/v1/projects/{id}/idle", delete_idle},
};

}  // namespace

std::span<const Route> idle_routes() { return kRoutes; }

}  // namespace allot
