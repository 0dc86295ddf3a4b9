// Instances: launch, list, get, stop, logs and events.
#include <charconv>

#include <fmt/format.h>

#include "api/app.h"
#include "api/launch.h"
#include "api/placement_fields.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "api/wire/cluster.h"
#include "common/image_ref.h"
#include "common/limits.h"
#include "common/money.h"
#include "common/random.h"
#include "core/kernel/draft.h"
#include "core/kernel/lifecycle.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

using nlohmann::json;

// A launch's body, with its template's fields under it when it names one.
Result<Launch> read_launch_of(const Call& call) {
  JsonBody body(call.request.body);
  const json& document = body.document();
  if (!document.is_object() || !document.contains("template")) return read_launch(body);
  const json& name = document["template"];
  if (!name.is_string()) return fail(ErrorCode::kInvalidType, "'template' must be a string");
  ALLOT_TRY_LET(const LaunchTemplate* found,
                find_template(call.options.templates, name.get_ref<const std::string&>()));
  json fields = with_template(*found, document);
  if (!fields.contains("command")) {
    return fail(
        ErrorCode::kMissingField,
        fmt::format("'command' is required: template '{}' leaves it to the launch", found->name));
  }
  JsonBody merged = JsonBody::from_document(std::move(fields));
  ALLOT_TRY_LET(Launch launch, read_launch(merged));
  launch.spec.from_template = found->name;
  return launch;
}

// A launch as its answer shows it: the instance, and a gang's members in rank order.
json launch_reply(const State& state, const Instance& instance) {
  json out = to_json(instance);
  if (instance.spec.nodes > 1) out["members"] = gang_members(Draft(state), instance.id);
  return out;
}

// A second launch with a key its tenant has used: the same launch again is answered as the
// first was (the instance as it is now), another is refused.
Result<HttpResponse> replay_launch(const Call& call, const std::string& tenant_id,
                                   const std::string& digest) {
  const State& state = call.ctx.state();
  const auto used = state.launch_by_key.find({tenant_id, call.request.idempotency_key});
  if (used == state.launch_by_key.end()) return fail(ErrorCode::kInternal, "no launch for the key");
  const Instance& first = *state.instance(used->second);
  if (first.launch_digest != digest) {
    return fail(ErrorCode::kConflict,
                fmt::format("the Idempotency-Key launched {} with other fields: use a new key "
                            "for another launch",
                            first.id));
  }
  HttpResponse reply = json_reply(200, launch_reply(state, first));
  reply.replayed = true;
  return reply;
}

Result<HttpResponse> create_instance(Call& call) {
  ALLOT_TRY_LET(Launch launch, read_launch_of(call));
  const std::string& key = call.request.idempotency_key;
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const Project* project, project_for(call, launch.project_id));
  const bool any_public = std::ranges::any_of(launch.spec.ports, &PublishedPort::is_public);
  if (any_public && !call.options.public_ports) {
    return fail(ErrorCode::kForbidden,
                "this deployment does not allow public ports: drop 'public' and use a key or a "
                "signed link (allot ports)");
  }
  ALLOT_TRY_ASSIGN(launch.spec.volumes,
                   resolve_volumes(call, project->tenant_id, std::move(launch.spec.volumes)));
  // Work that mounts volumes runs where they are, unless the launch limits its regions itself
  // (the core refuses a limit that leaves their region out).
  if (!launch.spec.volumes.empty() && launch.spec.regions.empty() && launch.spec.region.empty()) {
    launch.spec.regions = {call.ctx.state().volume(launch.spec.volumes.front().volume_id)->region};
  }
  const InstanceSpec& spec = launch.spec;
  const std::string id = call.ctx.ids().new_id("ins");
  std::vector<std::string> member_ids;
  for (int rank = 1; rank < spec.nodes && rank < limits::kMaxGangNodes; ++rank) {
    member_ids.push_back(call.ctx.ids().new_id("ins"));
  }
  // What the key stands for: the body as parsed, its keys in order and its spacing gone.
  const std::string digest =
      key.empty() ? std::string() : sha256_hex(json::parse(call.request.body).dump());
  const Status created = call.ctx.apply(CreateInstance{.id = id,
                                                       .tenant_id = project->tenant_id,
                                                       .project_id = project->id,
                                                       .user_id = call.caller.user_id,
                                                       .spec = spec,
                                                       .member_ids = member_ids,
                                                       .launch_key = key,
                                                       .launch_digest = digest});
  if (!created) {
    const bool key_used = !key.empty() && created.error().code == ErrorCode::kAlreadyExists &&
                          call.ctx.state().launch_by_key.contains({project->tenant_id, key});
    if (key_used) return replay_launch(call, project->tenant_id, digest);
    return std::unexpected(created.error());
  }
  call.target_id = id;
  return json_reply(201, launch_reply(call.ctx.state(), *call.ctx.state().instance(id)));
}

// GET /v1/instances, from the read view, through its per-tenant, project, node and state indexes.
Result<HttpResponse> list_instances(ViewCall& call) {
  ALLOT_TRY_LET(const Page page,
                read_page(call.target, {"state", "project_id", "node_id", "tenant_id"}));
  InstanceFilter filter;
  ALLOT_TRY_ASSIGN(filter.state, read_choice(call.target, "state", instance_state_names()));
  const auto& q = call.target.query;
  auto query = [&q](const char* key) -> std::optional<std::string> {
    auto it = q.find(key);
    return it == q.end() ? std::nullopt : std::optional(it->second);
  };
  filter.project_id = query("project_id");
  filter.node_id = query("node_id");
  filter.tenant_id = query("tenant_id");
  if (!call.caller.is_operator_admin()) {
    // Others' tenants are not there to see: asking for one finds nothing.
    if (filter.tenant_id && *filter.tenant_id != call.caller.tenant_id) {
      return shown_page(std::vector<ShownInstance>{}, 0);
    }
    filter.tenant_id = call.caller.tenant_id;
  }
  const auto limit = static_cast<size_t>(page.limit);
  return shown_page(call.view.instances(filter, page.after, limit + 1), limit);
}

Result<HttpResponse> get_instance(ViewCall& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("instance id", id, "ins"));
  const ShownInstance shown = call.view.instance(id);
  if (shown == nullptr || !may_see_tenant(call.caller, shown->object().tenant_id)) {
    return fail(ErrorCode::kNotFound, "no instance " + id);
  }
  return shown_reply(*shown);
}

Result<const Instance*> path_instance(const Call& call) {
  ALLOT_TRY(check_id("instance id", call.params.front(), "ins"));
  const Instance* instance = call.ctx.state().instance(call.params.front());
  if (instance == nullptr || !may_see_tenant(call.caller, instance->tenant_id)) {
    return fail(ErrorCode::kNotFound, "no instance " + call.params.front());
  }
  return instance;
}

Result<HttpResponse> stop_instance(Call& call) {
  ALLOT_TRY_LET(const Instance* instance, path_instance(call));
  ALLOT_TRY(require_launcher(call.caller));
  const std::string id = instance->id;
  ALLOT_TRY(call.ctx.apply(StopInstance{.id = id}));
  return json_reply(200, to_json(*call.ctx.state().instance(id)));
}

Result<int64_t> query_int(const Target& target, const char* key, int64_t fallback, int64_t max) {
  auto it = target.query.find(key);
  if (it == target.query.end()) return fallback;
  int64_t value = 0;
  const char* end = it->second.data() + it->second.size();
  if (std::from_chars(it->second.data(), end, value).ptr != end || value < 0 || value > max) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("{} must be from 0 to {}", key, max));
  }
  return value;
}

Result<HttpResponse> instance_logs(Call& call) {
  // read_page refuses unknown parameters; its paging itself does not apply to logs.
  ALLOT_TRY(read_page(call.target, {"offset", "tail", "bytes"}));
  ALLOT_TRY_LET(const Instance* instance, path_instance(call));
  constexpr auto kLimit = static_cast<int64_t>(limits::kMaxLogChunkBytes);
  ALLOT_TRY_LET(const int64_t offset, query_int(call.target, "offset", 0, INT64_MAX));
  ALLOT_TRY_LET(const int64_t tail, query_int(call.target, "tail", 0, 100'000));
  ALLOT_TRY_LET(const int64_t limit, query_int(call.target, "bytes", kLimit, kLimit));
  const std::string id = instance->id;
  ALLOT_TRY_LET(const auto chunk, call.target.query.contains("tail")
                                      ? call.logs.tail(id, static_cast<int>(tail), limit)
                                      : call.logs.read(id, offset, limit));
  return json_reply(200, {{"offset", chunk.offset},
                          {"next_offset", chunk.offset + static_cast<int64_t>(chunk.data.size())},
                          {"size", chunk.size},
                          {"dropped_bytes", chunk.dropped},
                          {"data", chunk.data},
                          {"ended", is_final(instance->state)}});
}

Result<HttpResponse> instance_events(Call& call) {
  ALLOT_TRY_LET(const Instance* instance, path_instance(call));
  return json_reply(200, {{"items", to_json(*instance)["events"]}});
}

// GET /v1/templates: the operator's launch templates, by name; every signed-in caller may read
// them.
Result<HttpResponse> list_templates(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  return page_of(
      call.options.templates, page, [](const LaunchTemplate&) { return true; },
      [](const LaunchTemplate& t) { return to_json(t); });
}

Result<HttpResponse> get_template(Call& call) {
  ALLOT_TRY_LET(const LaunchTemplate* found,
                find_template(call.options.templates, call.params.at(0)));
  return json_reply(200, to_json(*found));
}

constexpr Resource kResources[] = {
    {.path = "/v1/instances",
     .create = create_instance,
     .view_list = list_instances,
     .view_get = get_instance},
};

constexpr Route kActions[] = {
    {"POST", "/v1/instances/{id}/stop", stop_instance},
    {"GET", "/v1/instances/{id}/logs", instance_logs},
    {"GET", "/v1/instances/{id}/events", instance_events},
    {"GET", "/v1/templates", list_templates},
    {"GET", "/v1/templates/{name}", get_template},
};

}  // namespace

std::span<const Route> instance_routes() { return route_table<kResources, kActions>(); }

}  // namespace allot
