// Budgets and the event log. Tenant admins manage their own tenant's budgets, operator admins
// any; everyone reads their own tenant's budgets and events.
#include <charconv>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/money.h"
#include "api/routes_util.h"
#include "api/wire/wire.h"
#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/validate.h"
#include "core/money/budgets.h"
#include "core/money/spend.h"
#include "store/budget_store.h"

namespace allot {
namespace {

using nlohmann::json;

// A budget as the API shows it: never its webhook secret, with this month's spend and the
// thresholds it has reached.
json budget_json(const State& state, const Budget& b, TimeMs now_ms, const TenantSpend& spend) {
  const std::string month = format_month(now_ms);
  json reached = json::array();
  for (int64_t pct : b.thresholds_pct) {
    if (alerted(state, b, month, pct)) reached.push_back(pct);
  }
  return {
      {"id", b.id},
      {"tenant_id", b.tenant_id},
      {"project_id", b.project_id.empty() ? json(nullptr) : json(b.project_id)},
      {"amount", Money::from_micros(b.amount_micros).to_string()},
      {"thresholds_pct", b.thresholds_pct},
      {"enforcement", enforcement_name(b.enforcement)},
      {"webhook_url", b.webhook_url.empty() ? json(nullptr) : json(b.webhook_url)},
      {"month", month},
      {"spend", Money::from_micros(spend.of(b.project_id)).to_string()},
      {"reached_pct", reached},
      {"created_at", format_time(b.created_at_ms)},
      {"updated_at", format_time(b.updated_at_ms)},
      {"deleted_at", b.deleted_at_ms == 0 ? json(nullptr) : json(format_time(b.deleted_at_ms))}};
}

Result<std::vector<int64_t>> read_thresholds(const json& value) {
  if (value.is_null()) return std::vector<int64_t>{50, 80, 100};
  if (!value.is_array()) {
    return fail(ErrorCode::kInvalidType, "'thresholds_pct' must be an array of whole numbers");
  }
  std::vector<int64_t> out;
  for (const json& item : value) {
    if (!item.is_number_integer()) {
      return fail(ErrorCode::kInvalidType, "'thresholds_pct' must be an array of whole numbers");
    }
    out.push_back(item.get<int64_t>());
  }
  return out;
}

Result<int64_t> read_amount(const std::string& text) {
  auto money = Money::parse(text);
  if (!money) {
    return fail(money.error().code,
                fmt::format("'amount' must be a decimal amount like \"250.00\": {}",
                            money.error().message));
  }
  return money->micros();
}

Result<HttpResponse> set_budget(Call& call) {
  JsonBody body(call.request.body);
  auto [tenant_id, project_id] = body.optional_string_fields({"tenant_id", "project_id"});
  std::string amount_text = body.required_string("amount");
  const json thresholds_json = body.optional_json("thresholds_pct");
  auto [enforcement_text, webhook_url, webhook_secret] =
      body.optional_string_fields({"enforcement", "webhook_url", "webhook_secret"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const std::string tenant, tenant_for(call, tenant_id));
  ALLOT_TRY(require_admin_of(call.caller, tenant));
  if (project_id) ALLOT_TRY(check_id("project_id", *project_id, "prj"));
  ALLOT_TRY_LET(const int64_t amount, read_amount(amount_text));
  ALLOT_TRY_LET(std::vector<int64_t> thresholds, read_thresholds(thresholds_json));
  Enforcement enforcement = Enforcement::kNone;
  if (enforcement_text) {
    auto parsed = parse_enforcement(*enforcement_text);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument,
                  "enforcement must be none, block_new or stop_running");
    }
    enforcement = *parsed;
  }
  if (webhook_url) {
    // Its form first, then where it leads: a tenant's webhook may not reach inside the operator's
    // network. Each delivery checks again (the name may resolve elsewhere by then).
    ALLOT_TRY(check_webhook_url(*webhook_url));
    ALLOT_TRY(check_webhook_host(*webhook_url, call.options.webhook_allow));
  }
  // A secret the caller did not give is made here and shown in this answer only.
  std::string generated;
  if (webhook_url && !webhook_secret) {
    generated = "whsec_" + call.ctx.ids().new_secret().substr(std::string_view("allot_").size());
  }
  SetBudget command{.id = call.ctx.ids().new_id("bud"),
                    .tenant_id = tenant,
                    .project_id = project_id.value_or(""),
                    .amount_micros = amount,
                    .thresholds_pct = std::move(thresholds),
                    .webhook_url = webhook_url.value_or(""),
                    .webhook_secret = webhook_secret ? *webhook_secret : generated,
                    .enforcement = enforcement};
  ALLOT_TRY(call.ctx.apply(command));
  const State& state = call.ctx.state();
  for (const auto& [id, b] : state.budgets) {
    if (b.live() && b.tenant_id == command.tenant_id && b.project_id == command.project_id) {
      call.target_id = id;
      json out = budget_json(state, b, call.ctx.now_ms(),
                             month_spend(state, b.tenant_id, call.ctx.now_ms()));
      if (!generated.empty()) out["webhook_secret"] = generated;
      return json_reply(200, out);
    }
  }
  return fail(ErrorCode::kInternal, "the budget set is not there");
}

Result<HttpResponse> list_budgets(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "include_deleted"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  const bool include_deleted = call.target.query.contains("include_deleted");
  const State& state = call.ctx.state();
  std::vector<const Budget*> shown;
  std::set<std::string> tenants;
  bool more = false;
  const auto& budgets = state.budgets;
  for (auto it = page.after.empty() ? budgets.begin() : budgets.upper_bound(page.after);
       it != budgets.end(); ++it) {
    const Budget& b = it->second;
    if (!may_see_tenant(call.caller, b.tenant_id) || (tenant && b.tenant_id != *tenant) ||
        (!include_deleted && !b.live())) {
      continue;
    }
    if (static_cast<int>(shown.size()) == page.limit) {
      more = true;
      break;
    }
    shown.push_back(&b);
    tenants.insert(b.tenant_id);
  }
  // One pass over the instances for the whole page, however many budgets it shows.
  const auto spends = month_spends(state, tenants, call.ctx.now_ms());
  json items = json::array();
  for (const Budget* b : shown) {
    items.push_back(budget_json(state, *b, call.ctx.now_ms(), spends.at(b->tenant_id)));
  }
  const json next = more ? json(shown.back()->id) : json(nullptr);
  return json_reply(200, {{"items", items}, {"next_after", next}});
}

Result<HttpResponse> delete_budget(Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("budget id", id, "bud"));
  const Budget* budget = call.ctx.state().budget(id);
  if (budget == nullptr || !may_see_tenant(call.caller, budget->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no budget {}", id));
  }
  ALLOT_TRY(require_admin_of(call.caller, budget->tenant_id));
  ALLOT_TRY(call.ctx.apply(DeleteBudget{.id = id}));
  const State& state = call.ctx.state();
  const Budget& deleted = *state.budget(id);
  return json_reply(200, budget_json(state, deleted, call.ctx.now_ms(),
                                     month_spend(state, deleted.tenant_id, call.ctx.now_ms())));
}

json delivery_json(const DeliveryStatus& d) {
  return {{"state", d.state},
          {"attempts", d.attempts},
          {"next_attempt_at", d.state == "pending" ? json(format_time(d.next_attempt_ms)) : json()},
          {"last_status", d.last_status.empty() ? json(nullptr) : json(d.last_status)}};
}

Result<HttpResponse> list_events(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  ALLOT_TRY_LET(const int64_t after, read_seq_after(page));
  ALLOT_TRY_LET(std::vector<StoredEvent> events,
                call.ctx.store().list_events(
                    EventQuery{.tenant_id = tenant, .after_seq = after, .limit = page.limit + 1}));
  auto render = [](const StoredEvent& stored) {
    json item = event_json(stored.event);
    if (stored.delivery) item["delivery"] = delivery_json(*stored.delivery);
    return item;
  };
  return log_page(std::move(events), page.limit, render,
                  [](const StoredEvent& stored) { return stored.event.seq; });
}

constexpr Resource kResources[] = {
    {.path = "/v1/budgets", .put = set_budget, .list = list_budgets, .remove = delete_budget},
    {.path = "/v1/events", .list = list_events},
};

}  // namespace

Result<int64_t> read_seq_after(const Page& page) {
  int64_t after = 0;
  if (page.after.empty()) return after;
  const char* end = page.after.data() + page.after.size();
  auto [stop, ec] = std::from_chars(page.after.data(), end, after);
  if (ec != std::errc{} || stop != end || after < 0) {
    return fail(ErrorCode::kInvalidArgument, "after must be a seq number");
  }
  return after;
}

std::span<const Route> budget_routes() { return route_table<kResources>(); }

}  // namespace allot
