#include "core/money/service_use.h"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/lookups.h"
#include "core/model/accounts.h"
#include "core/money/money_internal.h"

namespace allot {
namespace {

constexpr TimeMs kHourMs = 3'600'000;

Status check_count(const ServiceUseCount& c) {
  for (const int64_t n : {c.requests, c.tokens, c.malformed, c.failed}) {
    if (n < 0 || n > limits::kMaxServiceUseCount) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("a use count is 0 to {}", limits::kMaxServiceUseCount));
    }
  }
  return {};
}

Status add_to(int64_t& into, int64_t n) {
  if (__builtin_add_overflow(into, n, &into)) {
    return fail(ErrorCode::kOverflow, "a service's use count leaves the range of numbers");
  }
  return {};
}

}  // namespace

std::string service_usage_id(const std::string& service_id, const std::string& caller_tenant_id,
                             TimeMs hour_ms, int64_t per_request_micros,
                             int64_t per_1k_tokens_micros) {
  return fmt::format("{}/{}/{}/{}/{}", service_id, caller_tenant_id, hour_ms, per_request_micros,
                     per_1k_tokens_micros);
}

int64_t spendable_on_services(const Draft& draft, const Tenant& tenant, TimeMs now_ms) {
  if (!tenant.money_limited()) return std::numeric_limits<int64_t>::max();
  const std::string own = tenant_account(tenant.id, tenant.billing);
  int64_t free_on_own = money::posted(draft.base().ledger, own) +
                        money::draft_flow(draft, tenant.id) -
                        money::held(draft, money::money_instances(draft, tenant.id));
  if (tenant.billing == BillingMode::kPostpaid) free_on_own += tenant.credit_limit_micros;
  return std::max<int64_t>(0, std::min(free_on_own, money::available(draft, tenant, now_ms)));
}

Result<Rows> apply(const State& state, const RecordServiceUse& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (c.counts.empty() || c.counts.size() > limits::kMaxServiceUseCounts) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a use report has 1 to {} counts", limits::kMaxServiceUseCounts));
  }
  Draft draft(state);
  std::map<std::string, ServiceUsage> rows;
  const TimeMs hour_ms = now_ms / kHourMs * kHourMs;
  for (const ServiceUseCount& count : c.counts) {
    if (auto ok = check_count(count); !ok) return std::unexpected(ok.error());
    const HostedService* service = state.service(count.service_id);
    if (service == nullptr) return std::unexpected(not_found("service", count.service_id));
    const Tenant* caller = state.tenant(count.caller_tenant_id);
    if (caller == nullptr) return std::unexpected(not_found("tenant", count.caller_tenant_id));
    if (caller->id == service->tenant_id) {
      return fail(ErrorCode::kInvalidArgument, "a service's own tenant is not billed for its use");
    }
    const auto [per_request, per_1k_tokens] = service->prices_at(now_ms);
    const std::string id =
        service_usage_id(service->id, caller->id, hour_ms, per_request, per_1k_tokens);
    auto [it, fresh] = rows.try_emplace(id);
    ServiceUsage& row = it->second;
    if (fresh) {
      auto known = state.service_usage.find(id);
      row = known != state.service_usage.end()
                ? known->second
                : ServiceUsage{.id = id,
                               .service_id = service->id,
                               .tenant_id = service->tenant_id,
                               .caller_tenant_id = caller->id,
                               .hour_ms = hour_ms,
                               .price_per_request_micros = per_request,
                               .price_per_1k_tokens_micros = per_1k_tokens};
    }
    for (auto [into, n] :
         {std::pair{&row.requests, count.requests}, std::pair{&row.tokens, count.tokens},
          std::pair{&row.malformed, count.malformed}, std::pair{&row.failed, count.failed}}) {
      if (auto ok = add_to(*into, n); !ok) return std::unexpected(ok.error());
    }
    const std::optional<int64_t> charge = row.charge();
    if (!charge || *charge > limits::kMaxMoneyMicros) {
      return fail(ErrorCode::kOverflow, "a service's charge leaves the range of amounts");
    }
    const int64_t due = *charge - row.charged_micros;
    row.charged_micros = *charge;
    row.updated_at_ms = now_ms;
    const int64_t pay = std::min(due, spendable_on_services(draft, *caller, now_ms));
    if (pay <= 0) continue;
    money::ensure_accounts(draft, *caller);
    money::ensure_account(draft, ledger::Account{.id = earnings_account(service->tenant_id),
                                                 .code = "tenant_earnings"});
    draft.add_transfer(
        ledger::Transfer{.id = fmt::format("service_use/{}/{}", id, row.postings++),
                         .debit_account_id = tenant_account(caller->id, caller->billing),
                         .credit_account_id = earnings_account(service->tenant_id),
                         .amount = pay,
                         .code = "service_use"});
    row.paid_micros += pay;
  }
  Rows out = draft.rows();
  for (auto& [id, row] : rows) out.emplace_back(std::move(row));
  return out;
}

void put(State& state, const ServiceUsage& usage) {
  state.service_usage[usage.id] = usage;
  state.usage_by_caller[usage.caller_tenant_id].insert(usage.id);
  state.usage_by_service[usage.service_id].insert(usage.id);
}

}  // namespace allot
