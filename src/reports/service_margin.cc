#include "reports/service_margin.h"

#include <map>

#include "core/money/metering.h"
#include "reports/invoice_draft.h"

namespace allot::billing {
namespace {

Error overflow() {
  return Error{ErrorCode::kOverflow, "a service's margin leaves the range of amounts"};
}

bool add(CallerUse& into, const ServiceUsage& u) {
  return !(__builtin_add_overflow(into.requests, u.requests, &into.requests) ||
           __builtin_add_overflow(into.tokens, u.tokens, &into.tokens) ||
           __builtin_add_overflow(into.malformed, u.malformed, &into.malformed) ||
           __builtin_add_overflow(into.failed, u.failed, &into.failed) ||
           __builtin_add_overflow(into.charged_micros, u.charged_micros, &into.charged_micros) ||
           __builtin_add_overflow(into.paid_micros, u.paid_micros, &into.paid_micros));
}

}  // namespace

Result<ServiceMargin> service_margin(const State& state, const HostedService& service,
                                     TimeMs from_ms, TimeMs to_ms, TimeMs now_ms) {
  ServiceMargin out;
  std::map<std::string, CallerUse> callers;
  if (auto ids = state.usage_by_service.find(service.id); ids != state.usage_by_service.end()) {
    for (const std::string& id : ids->second) {
      const ServiceUsage& u = state.service_usage.at(id);
      if (u.hour_ms < from_ms || u.hour_ms >= to_ms) continue;
      CallerUse& caller = callers[u.caller_tenant_id];
      caller.tenant_id = u.caller_tenant_id;
      if (!add(caller, u) || !add(out.total, u)) return std::unexpected(overflow());
    }
  }
  for (auto& [id, caller] : callers) out.callers.push_back(std::move(caller));
  const int64_t from_s = from_ms / 1000;
  const int64_t to_s = to_ms / 1000;
  for (const auto& [id, instance] : state.instances) {
    if (instance.spec.service_id != service.id) continue;
    auto usage = usage_of(state, instance, std::min(to_ms, now_ms));
    if (!usage) continue;
    auto milli_seconds =
        milli_seconds_within(usage->milli, usage->start_s, usage->end_s, from_s, to_s);
    if (!milli_seconds) return std::unexpected(milli_seconds.error());
    auto cost = charge_between(state, *usage, from_s, to_s);
    if (!cost) return std::unexpected(cost.error());
    if (__builtin_add_overflow(out.replica_gpu_milli_seconds, *milli_seconds,
                               &out.replica_gpu_milli_seconds) ||
        __builtin_add_overflow(out.gpu_cost_micros, *cost, &out.gpu_cost_micros)) {
      return std::unexpected(overflow());
    }
  }
  if (__builtin_sub_overflow(out.total.charged_micros, out.gpu_cost_micros, &out.margin_micros)) {
    return std::unexpected(overflow());
  }
  return out;
}

}  // namespace allot::billing
