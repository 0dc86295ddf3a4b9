// Tenant money: top-ups and credits (operator admins record them), balances and ledger statements
// (a tenant's users read their own), and how a tenant pays (operator admins set it).
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/money.h"
#include "api/routes_util.h"
#include "api/wire/wire.h"
#include "common/money.h"
#include "core/kernel/draft.h"
#include "core/kernel/validate.h"
#include "core/money/money.h"
#include "core/money/service_use.h"

namespace allot {
namespace {

using nlohmann::json;

std::string amount(int64_t micros) { return Money::from_micros(micros).to_string(); }

// The tenant named in the path ("me": the caller's own), if the caller may see it (others' are
// not found, not forbidden).
Result<const Tenant*> path_tenant(const Call& call) {
  const std::string id = call.params.front() == "me" ? call.caller.tenant_id : call.params.front();
  ALLOT_TRY(check_id("tenant id", id, "ten"));
  const Tenant* tenant = call.ctx.state().tenant(id);
  if (tenant == nullptr || !may_see_tenant(call.caller, id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no tenant {}", id));
  }
  return tenant;
}

Result<int64_t> read_amount(const std::string& field, const std::string& text) {
  auto money = Money::parse(text);
  if (!money) {
    return fail(money.error().code, fmt::format("'{}' must be a decimal amount like \"100.00\": {}",
                                                field, money.error().message));
  }
  return money->micros();
}

json balance_json(const State& state, const Tenant& tenant, TimeMs now_ms) {
  const Balance b = *balance_of(state, tenant.id, now_ms);
  json out{{"tenant_id", tenant.id},
           {"billing", billing_mode_name(tenant.billing)},
           {"credit_limit", amount(tenant.credit_limit_micros)},
           {"cash", amount(b.cash_micros)},
           {"credits", amount(b.credits_micros)},
           {"held", amount(b.held_micros)},
           {"unposted", amount(b.unposted_micros)},
           {"at", format_time(now_ms)}};
  out["available"] = tenant.money_limited() ? json(amount(b.available_micros)) : json(nullptr);
  // Promotional credit pays for GPU work and storage, not for other tenants' services: what of
  // the available money the tenant's calls may spend.
  out["available_for_services"] =
      tenant.money_limited() ? json(amount(spendable_on_services(Draft(state), tenant, now_ms)))
                             : json(nullptr);
  return out;
}

// POST /v1/tenants/{id}/topups {"amount", "credit", "expires_at", "id"}: money paid in, or a
// promotional credit. `id`, the caller's idempotency key, makes a retry harmless.
Result<HttpResponse> create_topup(Call& call) {
  JsonBody body(call.request.body);
  std::string amount_text = body.required_string("amount");
  auto credit = body.optional_bool("credit");
  auto [expires_at, key] = body.optional_string_fields({"expires_at", "id"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY_LET(const Tenant* tenant, path_tenant(call));
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const int64_t micros, read_amount("amount", amount_text));
  // Only a missing id gets a fresh one: an empty id given is refused by the core, not taken as
  // "no id" (which would make a retry of it a second top-up).
  Topup topup{.id = key ? *key : call.ctx.ids().new_id("top"),
              .tenant_id = tenant->id,
              .amount_micros = micros,
              .credit = credit.value_or(false)};
  if (expires_at) {
    ALLOT_TRY_ASSIGN(topup.expires_at_ms,
                     read_time("expires_at", *expires_at, "2027-01-01T00:00:00Z"));
  }
  const bool again = call.ctx.state().ledger.transfer("topup/" + topup.id) != nullptr;
  ALLOT_TRY(call.ctx.apply(topup));
  call.target_id = topup.id;
  json out = balance_json(call.ctx.state(), *tenant, call.ctx.now_ms());
  out["topup_id"] = topup.id;
  return json_reply(again ? 200 : 201, out);
}

Result<HttpResponse> get_balance(Call& call) {
  ALLOT_TRY_LET(const Tenant* tenant, path_tenant(call));
  return json_reply(200, balance_json(call.ctx.state(), *tenant, call.ctx.now_ms()));
}

json statement_line(const ledger::Transfer& t, bool debit) {
  return {{"id", t.id},
          {"code", t.code},
          {"kind", t.kind == ledger::TransferKind::kPending ? "hold" : "posted"},
          {"account", debit ? t.debit_account_id : t.credit_account_id},
          {"amount", amount(debit ? -t.amount : t.amount)},
          {"at", format_time(t.created_at_ms)}};
}

// GET /v1/tenants/{id}/ledger: the transfers on the tenant's accounts, newest first, a page at a
// time; `after` is the last transfer id of the previous page.
Result<HttpResponse> get_statement(Call& call) {
  ALLOT_TRY_LET(const Tenant* tenant, path_tenant(call));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  const std::string prefix = fmt::format("tenant/{}/", tenant->id);
  const ledger::Ledger& book = call.ctx.state().ledger;
  const auto& transfers = book.transfers();
  auto on_statement = [&prefix](const ledger::Transfer& t) {
    return t.debit_account_id.starts_with(prefix) || t.credit_account_id.starts_with(prefix);
  };
  size_t end = transfers.size();  // Lines come from before this position, newest first.
  if (!page.after.empty()) {
    const ledger::Transfer* last = book.transfer(page.after);
    if (last == nullptr || !on_statement(*last)) {
      return fail(ErrorCode::kInvalidArgument,
                  "after must be the id of a transfer on this tenant's statement");
    }
    end = static_cast<size_t>(last - transfers.data());
  }
  json items = json::array();
  bool more = false;
  for (size_t i = end; i-- > 0;) {
    const ledger::Transfer& t = transfers[i];
    if (!on_statement(t)) continue;
    if (static_cast<int>(items.size()) == page.limit) {
      more = true;
      break;
    }
    items.push_back(statement_line(t, t.debit_account_id.starts_with(prefix)));
  }
  const json next = more ? json(items.back()["id"]) : json(nullptr);
  return json_reply(200, json{{"items", items}, {"next_after", next}});
}

}  // namespace

// PATCH /v1/tenants/{id} {"billing", "credit_limit"}: part of update_tenant (identity_routes.cc).
Status apply_billing_change(Call& call, const std::string& tenant_id,
                            const std::optional<std::string>& billing,
                            const std::optional<std::string>& credit_limit) {
  if (!billing && !credit_limit) return {};
  const Tenant* tenant = call.ctx.state().tenant(tenant_id);
  SetBilling change{.tenant_id = tenant_id,
                    .mode = tenant->billing,
                    .credit_limit_micros = tenant->credit_limit_micros};
  if (billing) {
    auto mode = parse_billing_mode(*billing);
    if (!mode) return fail(ErrorCode::kInvalidArgument, "billing must be prepaid or postpaid");
    change.mode = *mode;
    if (*mode == BillingMode::kPrepaid) change.credit_limit_micros = 0;
  }
  if (credit_limit) {
    ALLOT_TRY_ASSIGN(change.credit_limit_micros, read_amount("credit_limit", *credit_limit));
  }
  return call.ctx.apply(change);
}

std::span<const Route> money_routes() {
  static const Route kRoutes[] = {
      {"POST", "/v1/tenants/{id}/topups", create_topup},
      {"GET", "/v1/tenants/{id}/balance", get_balance},
      {"GET", "/v1/tenants/{id}/ledger", get_statement},
  };
  return kRoutes;
}

}  // namespace allot
