// Service keys and margins. A service's tenant makes keys for its own customers (their use is
// not billed by Allot); another tenant makes caller keys of its own to a service shared with it
// (by id, or by name when it has no service of that name), and pays for their use at the
// service's prices. The service's tenant sees and revokes every key of it; a caller, its own. The
// margin report is the service's tenant's: callers' charges against the replicas' GPU cost.
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "common/random.h"
#include "core/cluster/services.h"
#include "core/kernel/validate.h"
#include "core/money/service_use.h"
#include "reports/invoice_render.h"
#include "reports/service_margin.h"

namespace allot {
namespace {

using nlohmann::json;

// The service a key route names, and whose keys the caller deals in: the service's tenant's,
// for those who may see it; the caller's own tenant's, for a service shared with others.
struct KeyScope {
  const HostedService* service = nullptr;
  std::string caller_tenant_id;
  bool owner = false;
};

// A service by id, or by name: the caller's own of that name, else one shared with it.
Result<KeyScope> key_scope(const Call& call) {
  const std::string& key = call.params.front();
  ALLOT_TRY_LET(const HostedService* found, service_by_key(call, key));
  if (found != nullptr && !found->deleted()) {
    if (may_see_tenant(call.caller, found->tenant_id)) {
      return KeyScope{.service = found, .caller_tenant_id = found->tenant_id, .owner = true};
    }
    if (found->shared && !call.caller.tenant_id.empty()) {
      return KeyScope{.service = found, .caller_tenant_id = call.caller.tenant_id};
    }
  }
  return fail(ErrorCode::kNotFound, fmt::format("no service {}", key.size() <= 64 ? key : "…"));
}

json key_json(const ServiceKey& k) {
  return {{"id", k.id},
          {"service_id", k.service_id},
          {"caller_tenant_id", k.caller_tenant_id.empty() ? k.tenant_id : k.caller_tenant_id},
          {"billed", k.billed()},
          {"name", k.name},
          {"prefix", k.prefix},
          {"created_at", format_time(k.created_at_ms)},
          {"revoked_at", time_or_null(k.revoked_at_ms)}};
}

// Whether the scope's caller deals in the key: the service's tenant in all of its keys.
bool in_scope(const KeyScope& scope, const ServiceKey& key) {
  return key.service_id == scope.service->id &&
         (scope.owner || (key.billed() && key.caller_tenant_id == scope.caller_tenant_id));
}

// POST /v1/services/{id}/keys {"name"}: a key to the service, shown once.
Result<HttpResponse> create_service_key(Call& call) {
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const KeyScope scope, key_scope(call));
  JsonBody body(call.request.body);
  const std::string name = body.required_string("name");
  ALLOT_TRY(body.finish());
  const std::string secret = std::string(kServiceKeyStart) +
                             call.ctx.ids().new_secret().substr(std::string("allot_").size());
  ServiceKey key{.id = call.ctx.ids().new_id("svk"),
                 .tenant_id = scope.service->tenant_id,
                 .service_id = scope.service->id,
                 .caller_tenant_id = scope.caller_tenant_id,
                 .name = name,
                 .prefix = secret.substr(0, kServiceKeyStart.size() + 6),
                 .token_hash = sha256_hex(secret)};
  const std::string id = key.id;
  ALLOT_TRY(call.ctx.apply(CreateServiceKey{std::move(key)}));
  call.target_id = id;
  const ServiceKey& made = call.ctx.state().service_keys.at(id);
  if (made.billed()) {
    // The proxy knows at once whether the new caller may pay, not from the controller's next
    // round.
    const Draft draft(call.ctx.state());
    call.traffic.meter().set_spendable(
        {{made.caller_tenant_id,
          spendable_on_services(draft, *call.ctx.state().tenant(made.caller_tenant_id),
                                call.ctx.now_ms())}});
  }
  json out = key_json(made);
  out["secret"] = secret;
  return json_reply(201, out);
}

// GET /v1/services/{id}/keys: the keys the caller deals in, revoked ones too, by id.
Result<HttpResponse> list_service_keys(Call& call) {
  ALLOT_TRY_LET(const KeyScope scope, key_scope(call));
  json items = json::array();
  const State& state = call.ctx.state();
  if (auto ids = state.keys_by_service.find(scope.service->id);
      ids != state.keys_by_service.end()) {
    for (const std::string& id : ids->second) {
      const ServiceKey& key = state.service_keys.at(id);
      if (in_scope(scope, key)) items.push_back(key_json(key));
    }
  }
  return json_reply(200, {{"items", items}, {"next_after", nullptr}});
}

// DELETE /v1/services/{id}/keys/{key}: the key stops working at once.
Result<HttpResponse> revoke_service_key(Call& call) {
  ALLOT_TRY(require_launcher(call.caller));
  ALLOT_TRY_LET(const KeyScope scope, key_scope(call));
  const std::string& key_id = call.params.at(1);
  const auto& keys = call.ctx.state().service_keys;
  const auto found = keys.find(key_id);
  if (found == keys.end() || !in_scope(scope, found->second)) {
    return fail(ErrorCode::kNotFound,
                fmt::format("no key {} of service {}", key_id.size() <= 64 ? key_id : "…",
                            scope.service->name));
  }
  call.target_id = key_id;
  ALLOT_TRY(call.ctx.apply(RevokeServiceKey{.id = key_id}));
  return json_reply(200, key_json(call.ctx.state().service_keys.at(key_id)));
}

json use_json(const billing::CallerUse& use) {
  return {{"requests", use.requests},
          {"tokens", use.tokens},
          {"malformed", use.malformed},
          {"failed", use.failed},
          {"charged", money_text(use.charged_micros)},
          {"paid", money_text(use.paid_micros)},
          {"owed", money_text(use.charged_micros - use.paid_micros)}};
}

// GET /v1/services/{id}/margin[?from=&to=]: this month unless a window is given.
Result<HttpResponse> service_margin(Call& call) {
  for (const auto& [name, value] : call.target.query) {
    if (name != "from" && name != "to") {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", name));
    }
  }
  ALLOT_TRY_LET(const KeyScope scope, key_scope(call));
  if (!scope.owner) {
    return fail(ErrorCode::kNotFound, fmt::format("no service {}", call.params.front()));
  }
  const TimeMs now_ms = call.ctx.now_ms();
  ALLOT_TRY_LET(const TimeMs from,
                read_window_edge(call.target, "from", false, month_start(now_ms)));
  ALLOT_TRY_LET(const TimeMs to, read_window_edge(call.target, "to", true, now_ms));
  if (to <= from) return fail(ErrorCode::kInvalidArgument, "'to' must be after 'from'");
  ALLOT_TRY_LET(const billing::ServiceMargin margin,
                billing::service_margin(call.ctx.state(), *scope.service, from, to, now_ms));
  json callers = json::array();
  for (const billing::CallerUse& use : margin.callers) {
    json entry = use_json(use);
    entry["tenant_id"] = use.tenant_id;
    const Tenant* tenant = call.ctx.state().tenant(use.tenant_id);
    entry["tenant"] = tenant != nullptr ? json(tenant->name) : json(nullptr);
    callers.push_back(std::move(entry));
  }
  json out = use_json(margin.total);
  out["service_id"] = scope.service->id;
  out["from"] = format_time(from);
  out["to"] = format_time(to);
  const auto [per_request, per_1k_tokens] = scope.service->prices_at(now_ms);
  out["price_per_request"] = money_text(per_request);
  out["price_per_1k_tokens"] = money_text(per_1k_tokens);
  out["revenue"] = money_text(margin.total.charged_micros);
  out["replica_gpu_hours"] = billing::gpu_hours_text(margin.replica_gpu_milli_seconds);
  out["gpu_cost"] = money_text(margin.gpu_cost_micros);
  out["margin"] = money_text(margin.margin_micros);
  out["callers"] = std::move(callers);
  return json_reply(200, out);
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/services/{id}/keys", create_service_key},
    {"GET", "/v1/services/{id}/keys", list_service_keys},
    {"DELETE", "/v1/services/{id}/keys/{key}", revoke_service_key},
    {"GET", "/v1/services/{id}/margin", service_margin},
};

}  // namespace

std::span<const Route> service_key_routes() { return kRoutes; }

}  // namespace allot
