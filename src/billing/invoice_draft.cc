#include "billing/invoice_draft.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/metering.h"
#include "core/money.h"

namespace allot::billing {
namespace {

Error overflow() {
  return Error{ErrorCode::kOverflow, "an invoice sum leaves the range of amounts"};
}

}  // namespace

Result<int64_t> milli_seconds_within(int64_t milli, int64_t start_s, int64_t end_s, int64_t from_s,
                                     int64_t to_s) {
  const int64_t seconds = std::max<int64_t>(0, std::min(end_s, to_s) - std::max(start_s, from_s));
  int64_t out = 0;
  if (__builtin_mul_overflow(milli, seconds, &out)) return std::unexpected(overflow());
  return out;
}

Result<DraftInvoice> draft_month(const State& state, const std::string& tenant_id, TimeMs month_ms,
                                 TimeMs now_ms, int64_t promotional_credits_micros) {
  if (state.tenant(tenant_id) == nullptr) {
    return fail(ErrorCode::kNotFound, fmt::format("no tenant {}", tenant_id));
  }
  if (month_start(month_ms) != month_ms) {
    return fail(ErrorCode::kInvalidArgument, "an invoice's month starts at its first moment");
  }
  const int64_t from_s = month_ms / 1000;
  const int64_t to_s = next_month_start(month_ms) / 1000;
  // Usage is read no later than the month's end: what runs on after it belongs to later months.
  const TimeMs read_at_ms = std::min(now_ms, next_month_start(month_ms));
  using Group = std::tuple<std::string, meter::PriceKey>;
  std::map<Group, InvoiceLine> lines;
  for (const auto& [id, instance] : state.instances) {
    if (instance.tenant_id != tenant_id) continue;
    auto usage = usage_of(state, instance, read_at_ms);
    if (!usage) continue;
    auto milli_seconds =
        milli_seconds_within(usage->milli, usage->start_s, usage->end_s, from_s, to_s);
    if (!milli_seconds) return std::unexpected(milli_seconds.error());
    if (*milli_seconds == 0) continue;
    auto amount = charge_between(state, *usage, from_s, to_s);
    if (!amount) return std::unexpected(amount.error());
    InvoiceLine& line = lines[{instance.project_id, usage->key}];
    line.project_id = instance.project_id;
    line.key = usage->key;
    if (__builtin_add_overflow(line.gpu_milli_seconds, *milli_seconds, &line.gpu_milli_seconds) ||
        __builtin_add_overflow(line.amount_micros, *amount, &line.amount_micros)) {
      return std::unexpected(overflow());
    }
    const EnergyUse energy = instance.energy_between(month_ms, next_month_start(month_ms));
    line.energy_mj += energy.energy_mj;
    line.carbon_ug += energy.carbon_ug;
  }
  DraftInvoice out{.tenant_id = tenant_id, .month_ms = month_ms};
  out.lines.reserve(lines.size());
  int64_t subtotal = 0;
  for (auto& [group, line] : lines) {
    if (__builtin_add_overflow(subtotal, line.amount_micros, &subtotal)) {
      return std::unexpected(overflow());
    }
    out.lines.push_back(std::move(line));
  }
  // Credits pay for usage, never more than the month's charges.
  out.credits_micros = std::clamp<int64_t>(promotional_credits_micros, 0, subtotal);
  return out;
}

int64_t credits_applied(const State& state, const std::string& tenant_id, TimeMs month_ms,
                        TimeMs now_ms) {
  return credits_spent(state, tenant_id, month_ms,
                       std::min(next_month_start(month_ms), now_ms + 1));
}

}  // namespace allot::billing
