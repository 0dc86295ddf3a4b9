// Quotas and reservations: operator admins set them; a tenant's users see their own.
#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/admission.h"
#include "api/routes_util.h"
#include "api/wire/admission.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

using nlohmann::json;

// GPU milli held now by the instances a rule counts, on GPUs its model covers.
int64_t held_milli(const State& state, const std::string& tenant_id, const std::string& project_id,
                   const std::string& model) {
  int64_t held = 0;
  for (const auto& [id, i] : state.instances) {
    if (is_final(i.state) || i.state == InstanceState::kQueued || i.tenant_id != tenant_id ||
        (!project_id.empty() && i.project_id != project_id)) {
      continue;
    }
    const Node* node = state.node(i.node_id);
    if (node == nullptr) continue;
    for (int index : i.gpu_indices) {
      const std::string& gpu_model = node->gpus.at(static_cast<size_t>(index)).model;
      if (model.empty() || gpu_model_matches(model, gpu_model)) held += i.milli_per_gpu();
    }
  }
  return held;
}

json quota_json(const State& state, const Quota& q) {
  json out = to_json(q);
  out["used_milli"] = held_milli(state, q.tenant_id, q.project_id, q.gpu_model);
  return out;
}

json reservation_json(const State& state, const Reservation& r, TimeMs now_ms) {
  json out = to_json(r);
  out["in_force"] = r.in_force(now_ms);
  out["used_milli"] = r.in_force(now_ms) ? held_milli(state, r.tenant_id, "", r.gpu_model) : 0;
  return out;
}

// A listing of rules the caller may see, with ?tenant_id= and ?include_ended=true.
template <typename T, typename Live, typename Show>
Result<HttpResponse> list_rules(Call& call, const std::map<std::string, T>& rules, Live live,
                                Show show) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "include_ended"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  auto ended = call.target.query.find("include_ended");
  const bool include_ended = ended != call.target.query.end() && ended->second == "true";
  return page_of(
      rules, page,
      [&](const T& rule) {
        return may_see_tenant(call.caller, rule.tenant_id) &&
               (!tenant || rule.tenant_id == *tenant) && (include_ended || live(rule));
      },
      show);
}

Result<HttpResponse> set_quota(Call& call) {
  JsonBody body(call.request.body);
  std::string tenant_id = body.required_string("tenant_id");
  auto [project_id, gpu_model] = body.optional_string_fields({"project_id", "gpu_model"});
  auto gpus = body.optional_int("gpus", INT64_MIN, INT64_MAX);
  auto gpu_milli = body.optional_int("gpu_milli", INT64_MIN, INT64_MAX);
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  if (gpus.has_value() == gpu_milli.has_value()) {
    return fail(ErrorCode::kInvalidArgument, "give the limit as exactly one of gpus or gpu_milli");
  }
  if (gpus && (*gpus < 0 || *gpus > 1'000'000)) {
    return fail(ErrorCode::kInvalidArgument, "gpus must be 0 to 1,000,000");
  }
  ALLOT_TRY(check_id("tenant_id", tenant_id, "ten"));
  if (project_id) ALLOT_TRY(check_id("project_id", *project_id, "prj"));
  const std::string id = call.ctx.ids().new_id("quo");
  SetQuota command{.id = id,
                   .tenant_id = tenant_id,
                   .project_id = project_id.value_or(""),
                   .gpu_model = gpu_model.value_or(""),
                   .gpu_milli = gpus ? *gpus * 1000 : *gpu_milli};
  ALLOT_TRY(call.ctx.apply(command));
  const State& state = call.ctx.state();
  for (const auto& [qid, q] : state.quotas) {
    if (q.live() && q.tenant_id == command.tenant_id && q.project_id == command.project_id &&
        q.gpu_model == command.gpu_model) {
      call.target_id = qid;
      return json_reply(200, quota_json(state, q));
    }
  }
  return fail(ErrorCode::kInternal, "the quota set is not there");
}

Result<HttpResponse> list_quotas(Call& call) {
  const State& state = call.ctx.state();
  return list_rules(
      call, state.quotas, [](const Quota& q) { return q.live(); },
      [&](const Quota& q) { return quota_json(state, q); });
}

Result<HttpResponse> delete_quota(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("quota id", id, "quo"));
  ALLOT_TRY(call.ctx.apply(DeleteQuota{.id = id}));
  return json_reply(200, quota_json(call.ctx.state(), *call.ctx.state().quota(id)));
}

Result<TimeMs> read_time(const std::string& field, const std::string& text) {
  auto at = parse_time(text);
  if (!at) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("'{}' must be RFC 3339 time in UTC, e.g. 2026-12-01T09:00:00Z", field));
  }
  return *at;
}

Result<HttpResponse> create_reservation(Call& call) {
  JsonBody body(call.request.body);
  std::string tenant_id = body.required_string("tenant_id");
  std::string gpu_model = body.required_string("gpu_model");
  auto gpus = body.optional_int("gpus", INT32_MIN, INT32_MAX);
  std::string starts_at = body.required_string("starts_at");
  std::string ends_at = body.required_string("ends_at");
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  if (!gpus) return fail(ErrorCode::kMissingField, "'gpus' is required");
  ALLOT_TRY(check_id("tenant_id", tenant_id, "ten"));
  ALLOT_TRY_LET(const TimeMs starts, read_time("starts_at", starts_at));
  ALLOT_TRY_LET(const TimeMs ends, read_time("ends_at", ends_at));
  const std::string id = call.ctx.ids().new_id("rsv");
  ALLOT_TRY(call.ctx.apply(CreateReservation{.id = id,
                                             .tenant_id = tenant_id,
                                             .gpu_model = gpu_model,
                                             .gpus = static_cast<int>(*gpus),
                                             .starts_at_ms = starts,
                                             .ends_at_ms = ends}));
  call.target_id = id;
  return json_reply(201, reservation_json(call.ctx.state(), *call.ctx.state().reservation(id),
                                          call.ctx.now_ms()));
}

Result<HttpResponse> list_reservations(Call& call) {
  const State& state = call.ctx.state();
  const TimeMs now_ms = call.ctx.now_ms();
  return list_rules(
      call, state.reservations,
      [&](const Reservation& r) { return r.cancelled_at_ms == 0 && r.ends_at_ms > now_ms; },
      [&](const Reservation& r) { return reservation_json(state, r, now_ms); });
}

Result<HttpResponse> cancel_reservation(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("reservation id", id, "rsv"));
  ALLOT_TRY(call.ctx.apply(CancelReservation{.id = id}));
  return json_reply(200, reservation_json(call.ctx.state(), *call.ctx.state().reservation(id),
                                          call.ctx.now_ms()));
}

constexpr Resource kResources[] = {
    {.path = "/v1/quotas", .put = set_quota, .list = list_quotas, .remove = delete_quota},
    {.path = "/v1/reservations",
     .create = create_reservation,
     .list = list_reservations,
     .remove = cancel_reservation},
};

}  // namespace

std::span<const Route> rules_routes() { return route_table<kResources>(); }

}  // namespace allot
