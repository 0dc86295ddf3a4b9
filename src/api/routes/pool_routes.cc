// Node pools through the API: create, list, show (with their nodes), change size and timers,
// delete. Operator admins only. The autoscaler (daemon/autoscaler.cc) does the rest.
#include <algorithm>

#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/pools.h"
#include "api/routes_util.h"
#include "api/wire/pools.h"
#include "common/limits.h"
#include "core/kernel/validate.h"
#include "core/pools/pools.h"

namespace allot {

namespace {

using nlohmann::json;

constexpr int64_t kMaxTimerS = limits::kMaxPoolTimerMs / 1000;

// A pool as a list shows it: with how many of its nodes are live.
json pool_with_count(const State& state, const Pool& pool) {
  json out = to_json(pool);
  out["live_nodes"] = std::ranges::count_if(state.pool_nodes, [&](const auto& entry) {
    return entry.second.pool_id == pool.id && entry.second.live();
  });
  return out;
}

json pool_with_nodes(const State& state, const Pool& pool) {
  json out = pool_with_count(state, pool);
  json nodes = json::array();
  for (const auto& [id, node] : state.pool_nodes) {
    if (node.pool_id == pool.id) nodes.push_back(to_json(node));
  }
  out["nodes"] = std::move(nodes);
  return out;
}

// The timers, in whole seconds on the wire.
struct Timers {
  std::optional<int64_t> boot_s;
  std::optional<int64_t> idle_s;
  std::optional<int64_t> cooldown_s;
};

Timers read_timers(JsonBody& body) {
  return Timers{.boot_s = body.optional_int("boot_timeout_s", 1, kMaxTimerS),
                .idle_s = body.optional_int("idle_timeout_s", 1, kMaxTimerS),
                .cooldown_s = body.optional_int("cooldown_s", 0, kMaxTimerS)};
}

std::optional<int64_t> to_ms(std::optional<int64_t> seconds) {
  if (!seconds) return std::nullopt;
  return *seconds * 1000;
}

Result<HttpResponse> create_pool(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  Pool pool{.name = body.required_string("name"),
            .gpu_model = body.required_string("gpu_model"),
            .region = body.optional_string("region").value_or("default")};
  const auto min_nodes = body.optional_int("min_nodes", 0, limits::kMaxPoolNodes);
  const auto max_nodes = body.optional_int("max_nodes", 0, limits::kMaxPoolNodes);
  const std::string provider = body.required_string("provider");
  const auto gpus = body.optional_int("gpus_per_node", 1, limits::kMaxGpusPerNode);
  const auto cpu = body.optional_int("cpu_milli", 0, limits::kMaxPoolCpuMilli);
  const auto memory = body.optional_int("memory_mib", 0, limits::kMaxPoolMemoryMib);
  pool.create_command = body.optional_string("create_command").value_or("");
  pool.delete_command = body.optional_string("delete_command").value_or("");
  const Timers timers = read_timers(body);
  ALLOT_TRY(body.finish());
  if (!max_nodes) return fail(ErrorCode::kMissingField, "'max_nodes' is required");
  auto parsed = parse_pool_provider(provider);
  if (!parsed) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("unknown provider {}: static, command or local", provider));
  }
  pool.provider = *parsed;
  pool.min_nodes = static_cast<int>(min_nodes.value_or(0));
  pool.max_nodes = static_cast<int>(*max_nodes);
  pool.gpus_per_node = static_cast<int>(gpus.value_or(8));
  // A node of the pool offers this much by default: 8 CPUs and 64 GiB per GPU.
  pool.cpu_milli = cpu.value_or(int64_t{pool.gpus_per_node} * 8'000);
  pool.memory_mib = memory.value_or(int64_t{pool.gpus_per_node} * 65'536);
  pool.boot_timeout_ms = to_ms(timers.boot_s).value_or(pool.boot_timeout_ms);
  pool.idle_timeout_ms = to_ms(timers.idle_s).value_or(pool.idle_timeout_ms);
  pool.cooldown_ms = to_ms(timers.cooldown_s).value_or(pool.cooldown_ms);
  pool.id = call.ctx.ids().new_id("pol");
  ALLOT_TRY(call.ctx.apply(CreatePool{.pool = pool}));
  call.target_id = pool.id;
  return json_reply(201, pool_with_nodes(call.ctx.state(), *call.ctx.state().pool(pool.id)));
}

Result<const Pool*> find_pool(const Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("pool id", id, "pol"));
  const Pool* pool = call.ctx.state().pool(id);
  if (pool == nullptr || pool->deleted()) {
    return fail(ErrorCode::kNotFound, fmt::format("no pool {}", id));
  }
  return pool;
}

Result<HttpResponse> get_pool(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Pool* pool, find_pool(call));
  return json_reply(200, pool_with_nodes(call.ctx.state(), *pool));
}

Result<HttpResponse> list_pools(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  const State& state = call.ctx.state();
  return page_of(
      state.pools, page, [](const Pool& p) { return !p.deleted(); },
      [&state](const Pool& p) { return pool_with_count(state, p); });
}

// PATCH /v1/pools/{id} {"min_nodes"?, "max_nodes"?, "boot_timeout_s"?, "idle_timeout_s"?,
// "cooldown_s"?}: what is left out stays.
Result<HttpResponse> update_pool(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Pool* pool, find_pool(call));
  JsonBody body(call.request.body);
  const auto min_nodes = body.optional_int("min_nodes", 0, limits::kMaxPoolNodes);
  const auto max_nodes = body.optional_int("max_nodes", 0, limits::kMaxPoolNodes);
  const Timers timers = read_timers(body);
  ALLOT_TRY(body.finish());
  UpdatePool command{.id = pool->id,
                     .boot_timeout_ms = to_ms(timers.boot_s),
                     .idle_timeout_ms = to_ms(timers.idle_s),
                     .cooldown_ms = to_ms(timers.cooldown_s)};
  if (min_nodes) command.min_nodes = static_cast<int>(*min_nodes);
  if (max_nodes) command.max_nodes = static_cast<int>(*max_nodes);
  call.target_id = pool->id;
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, pool_with_nodes(call.ctx.state(), *call.ctx.state().pool(command.id)));
}

Result<HttpResponse> delete_pool(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Pool* pool, find_pool(call));
  const std::string id = pool->id;
  call.target_id = id;
  ALLOT_TRY(call.ctx.apply(DeletePool{.id = id}));
  return json_reply(200, to_json(*call.ctx.state().pool(id)));
}

constexpr Resource kResources[] = {
    {.path = "/v1/pools",
     .create = create_pool,
     .list = list_pools,
     .get = get_pool,
     .update = update_pool,
     .remove = delete_pool},
};

}  // namespace

std::span<const Route> pool_routes() { return route_table<kResources>(); }

}  // namespace allot
