// Volumes: tenants' storage that outlives their instances. Tenant members (not viewers) create
// and delete them; any key of the tenant lists them. Another tenant's volume is not there: 404.
#include <algorithm>

#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "core/cluster/volumes.h"
#include "core/kernel/validate.h"
#include "core/regions/regions.h"

namespace allot {
namespace {

using nlohmann::json;

json volume_json(const State& state, const Volume& v) {
  json mounted = json::array();
  for (const Instance* instance : instances_mounting(state, v.id)) mounted.push_back(instance->id);
  return {{"id", v.id},
          {"tenant_id", v.tenant_id},
          {"project_id", v.project_id},
          {"name", v.name},
          {"region", v.region},
          {"backend", v.backend},
          {"size_gb", v.size_gb},
          {"node_id", v.node_id.empty() ? json(nullptr) : json(v.node_id)},
          {"mounted_by", mounted},
          {"created_at", format_time(v.created_at_ms)},
          {"deleted_at", time_or_null(v.deleted_at_ms)}};
}

// The regions a volume may be made in: those the fleet, the price catalog, the sites or the
// latency table know, and those the operator declared NFS exports for.
std::set<std::string> volume_regions(const Call& call) {
  std::set<std::string> out = known_regions(call.ctx.state());
  out.insert(call.options.nfs_regions.begin(), call.options.nfs_regions.end());
  return out;
}

Result<std::string> region_of_new_volume(const Call& call,
                                         const std::optional<std::string>& named) {
  const std::set<std::string> regions = volume_regions(call);
  if (!named) {
    if (regions.size() == 1) return *regions.begin();
    if (regions.empty()) return std::string("default");  // Where agents go unless told.
    return fail(
        ErrorCode::kMissingField,
        fmt::format("'region' is required: there are several ({})", fmt::join(regions, ", ")));
  }
  if (!regions.contains(*named)) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("no region '{}'; there are: {}", named->size() <= 64 ? *named : "…",
                    regions.empty() ? "none yet" : fmt::format("{}", fmt::join(regions, ", "))));
  }
  return *named;
}

// POST /v1/volumes {"name", "size_gb"[, "region", "backend", "project_id"]}
Result<HttpResponse> create_volume(Call& call) {
  JsonBody body(call.request.body);
  auto name = body.required_string("name");
  auto size_gb = body.optional_int("size_gb", 1, INT64_MAX);
  auto [region, backend, project_id] =
      body.optional_string_fields({"region", "backend", "project_id"});
  ALLOT_TRY(body.finish());
  if (!size_gb) return fail(ErrorCode::kMissingField, "'size_gb' is required");
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const Project* project, project_for(call, project_id));
  if (*size_gb > call.options.max_volume_gb) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("size_gb {} is above the operator's limit of {} GB (max_volume_gb)",
                            *size_gb, call.options.max_volume_gb));
  }
  ALLOT_TRY_LET(const std::string where, region_of_new_volume(call, region));
  const bool has_nfs = call.options.nfs_regions.contains(where);
  const std::string kind = backend.value_or(has_nfs ? "nfs" : "local");
  if (kind == kVolumeNfs && !has_nfs) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("region {} has no NFS export (the operator's nfs_regions)", where));
  }
  const std::string id = call.ctx.ids().new_id("vol");
  ALLOT_TRY(call.ctx.apply(CreateVolume{Volume{.id = id,
                                               .tenant_id = project->tenant_id,
                                               .project_id = project->id,
                                               .name = name,
                                               .region = where,
                                               .backend = kind,
                                               .size_gb = *size_gb}}));
  call.target_id = id;
  return json_reply(201, volume_json(call.ctx.state(), *call.ctx.state().volume(id)));
}

// A volume the caller may see, by id or by its tenant's name for it.
Result<const Volume*> path_volume(const Call& call) {
  const std::string& key = call.params.front();
  const State& state = call.ctx.state();
  const Volume* found = nullptr;
  if (check_id("volume id", key, "vol")) {
    found = state.volume(key);
  } else {
    found = state.volume_named(call.caller.tenant_id, key);
  }
  if (found == nullptr || found->deleted_at_ms != 0 ||
      !may_see_tenant(call.caller, found->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no volume {}", key.size() <= 64 ? key : "…"));
  }
  return found;
}

Result<HttpResponse> get_volume(Call& call) {
  ALLOT_TRY_LET(const Volume* volume, path_volume(call));
  return json_reply(200, volume_json(call.ctx.state(), *volume));
}

// GET /v1/volumes[?tenant_id=&project_id=]: live volumes, by id.
Result<HttpResponse> list_volumes(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "project_id"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  const auto project = call.target.query.find("project_id");
  return page_of(
      call.ctx.state().volumes, page,
      [&](const Volume& v) {
        return v.deleted_at_ms == 0 && may_see_tenant(call.caller, v.tenant_id) &&
               (!tenant || v.tenant_id == *tenant) &&
               (project == call.target.query.end() || v.project_id == project->second);
      },
      [&](const Volume& v) { return volume_json(call.ctx.state(), v); });
}

// DELETE /v1/volumes/{id or name}: refused with conflict while an instance mounts it.
Result<HttpResponse> delete_volume(Call& call) {
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const Volume* volume, path_volume(call));
  const std::string id = volume->id;
  ALLOT_TRY(call.ctx.apply(DeleteVolume{.id = id}));
  call.target_id = id;
  return json_reply(200, volume_json(call.ctx.state(), *call.ctx.state().volume(id)));
}

constexpr Resource kResources[] = {
    {.path = "/v1/volumes",
     .create = create_volume,
     .list = list_volumes,
     .get = get_volume,
     .remove = delete_volume},
};

}  // namespace

std::span<const Route> volume_routes() { return route_table<kResources>(); }

Result<std::vector<VolumeMount>> resolve_volumes(const Call& call, const std::string& tenant_id,
                                                 std::vector<VolumeMount> mounts) {
  const State& state = call.ctx.state();
  for (VolumeMount& mount : mounts) {
    const Volume* volume = state.volume_named(tenant_id, mount.name);
    if (volume == nullptr && check_id("volume", mount.name, "vol")) {
      volume = state.volume(mount.name);
    }
    if (volume == nullptr || volume->deleted_at_ms != 0 || volume->tenant_id != tenant_id) {
      return fail(ErrorCode::kNotFound,
                  fmt::format("no volume {}", mount.name.size() <= 64 ? mount.name : "…"));
    }
    mount.volume_id = volume->id;
    mount.name = volume->name;
  }
  return mounts;
}

}  // namespace allot
