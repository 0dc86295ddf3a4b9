#include "core/cluster/service_prices.h"

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/money.h"

namespace allot {
namespace {

// The tenants that hold live keys to call the service and pay for it.
std::set<std::string> caller_tenants(const State& state, const std::string& service_id) {
  std::set<std::string> out;
  for (const std::string& id : state.billed_keys) {
    const ServiceKey& key = state.service_keys.at(id);
    if (key.service_id == service_id && key.revoked_at_ms == 0) out.insert(key.caller_tenant_id);
  }
  return out;
}

// A tenant-wide budget of the caller's with a webhook: where its notices go.
const Budget* notice_hook(const State& state, const std::string& tenant_id) {
  for (const auto& [id, b] : state.budgets) {
    if (b.live() && b.tenant_id == tenant_id && b.project_id.empty() && !b.webhook_url.empty()) {
      return &b;
    }
  }
  return nullptr;
}

void announce(Draft& draft, const HostedService& s, const std::string& caller) {
  const nlohmann::json payload = {
      {"service_id", s.id},
      {"service", s.name},
      {"price_per_request", Money::from_micros(s.price_per_request_micros).to_string()},
      {"price_per_1k_tokens", Money::from_micros(s.price_per_1k_tokens_micros).to_string()},
      {"new_price_per_request", Money::from_micros(s.rising_price_per_request_micros).to_string()},
      {"new_price_per_1k_tokens",
       Money::from_micros(s.rising_price_per_1k_tokens_micros).to_string()},
      {"effective_at", format_time(s.prices_rise_at_ms)}};
  const Budget* hook = notice_hook(draft.base(), caller);
  draft.add_row(Event{.seq = draft.next_event_seq(),
                      .at_ms = s.updated_at_ms,
                      .tenant_id = caller,
                      .kind = "service.price_rising",
                      .payload = payload.dump(),
                      .webhook_budget_id = hook != nullptr ? hook->id : "",
                      .webhook_url = hook != nullptr ? hook->webhook_url : ""});
}

}  // namespace

void set_service_prices(Draft& draft, const HostedService& found, HostedService& next,
                        std::optional<int64_t> per_request_micros,
                        std::optional<int64_t> per_1k_tokens_micros, TimeMs now_ms,
                        int64_t notice_ms) {
  const auto [request_now, tokens_now] = found.prices_at(now_ms);
  const bool pending = found.rise_pending(now_ms);
  if (!per_request_micros && !per_1k_tokens_micros) {
    if (!pending) {  // A rise in force becomes the price; nothing else changes.
      next.price_per_request_micros = request_now;
      next.price_per_1k_tokens_micros = tokens_now;
      next.rising_price_per_request_micros = 0;
      next.rising_price_per_1k_tokens_micros = 0;
      next.prices_rise_at_ms = 0;
    }
    return;
  }
  const int64_t request_asked =
      per_request_micros.value_or(pending ? found.rising_price_per_request_micros : request_now);
  const int64_t tokens_asked =
      per_1k_tokens_micros.value_or(pending ? found.rising_price_per_1k_tokens_micros : tokens_now);
  // What falls is in force at once; what rises waits for its notice where callers pay.
  next.price_per_request_micros = std::min(request_asked, request_now);
  next.price_per_1k_tokens_micros = std::min(tokens_asked, tokens_now);
  next.rising_price_per_request_micros = 0;
  next.rising_price_per_1k_tokens_micros = 0;
  next.prices_rise_at_ms = 0;
  const bool rises = request_asked > request_now || tokens_asked > tokens_now;
  const std::set<std::string> callers =
      next.shared ? caller_tenants(draft.base(), found.id) : std::set<std::string>{};
  if (!rises || callers.empty()) {
    next.price_per_request_micros = request_asked;
    next.price_per_1k_tokens_micros = tokens_asked;
    return;
  }
  next.rising_price_per_request_micros = request_asked;
  next.rising_price_per_1k_tokens_micros = tokens_asked;
  // A rise announced before and asked again keeps its time: the notice is not restarted.
  const bool same = pending && found.rising_price_per_request_micros == request_asked &&
                    found.rising_price_per_1k_tokens_micros == tokens_asked;
  next.prices_rise_at_ms = same ? found.prices_rise_at_ms : now_ms + notice_ms;
  if (same) return;
  next.updated_at_ms = now_ms;
  for (const std::string& caller : callers) announce(draft, next, caller);
}

}  // namespace allot
