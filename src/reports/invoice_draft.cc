#include "reports/invoice_draft.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/money/invoices.h"
#include "core/money/metering.h"
#include "core/money/money.h"
#include "core/money/storage.h"

namespace allot::billing {
namespace {

Error overflow() {
  return Error{ErrorCode::kOverflow, "an invoice sum leaves the range of amounts"};
}

// Of the instance's charge within [from_s, to_s), what the ledger has posted: usage is posted up
// to the instance's billed_to_ms as it accrues.
Result<int64_t> posted_within(const State& state, const Instance& instance, const Usage& usage,
                              int64_t from_s, int64_t to_s) {
  const int64_t posted_to_s = std::min(to_s, instance.billed_to_ms / 1000);
  if (posted_to_s <= from_s) return 0;
  return charge_between(state, usage, from_s, posted_to_s);
}

// The usage postings from the tenant's prepaid account that paid the period: those made within
// it and those of the first posting after it, which posts the period's last stretch. A posting
// that straddles a month's end is therefore named on both months' invoices.
BalancePayments balance_payments(const State& state, const std::string& tenant_id,
                                 const Period& period) {
  const std::string account = tenant_account(tenant_id, BillingMode::kPrepaid);
  auto usage_from_balance = [&](const ledger::Transfer& t) {
    return (t.code == "usage" || t.code == "storage" || t.code == "service_use") &&
           t.debit_account_id == account;
  };
  const auto& transfers = state.ledger.transfers();
  TimeMs closing_ms = period.end_ms;
  for (const ledger::Transfer& t : transfers) {
    if (usage_from_balance(t) && t.created_at_ms >= period.end_ms) {
      closing_ms = t.created_at_ms;
      break;
    }
  }
  BalancePayments out;
  for (const ledger::Transfer& t : transfers) {
    if (!usage_from_balance(t) || t.created_at_ms < period.start_ms ||
        t.created_at_ms > closing_ms) {
      continue;
    }
    if (out.transfers++ == 0) out.first_transfer_id = t.id;
    out.last_transfer_id = t.id;
  }
  return out;
}

using Lines = std::map<std::tuple<std::string, meter::PriceKey>, InvoiceLine>;

// The tenant's volumes' storage within the period, one line per project and region, and what the
// ledger has posted of it added to `posted`.
Status add_storage_lines(const State& state, const std::string& tenant_id, const Period& period,
                         Lines& lines, int64_t& posted) {
  const int64_t from_s = period.start_ms / 1000;
  const int64_t to_s = period.end_ms / 1000;
  for (const auto& [id, volume] : state.volumes) {
    if (volume.tenant_id != tenant_id) continue;
    const StorageUse use = storage_use(volume, period.end_ms);
    auto gb_seconds = gb_seconds_within(use, from_s, to_s);
    if (!gb_seconds) return std::unexpected(gb_seconds.error());
    if (*gb_seconds == 0) continue;
    auto amount = storage_between(state, use, from_s, to_s);
    if (!amount) return std::unexpected(amount.error());
    InvoiceLine& line = lines[{volume.project_id, use.key}];
    line.project_id = volume.project_id;
    line.key = use.key;
    if (__builtin_add_overflow(line.gb_seconds, *gb_seconds, &line.gb_seconds) ||
        __builtin_add_overflow(line.amount_micros, *amount, &line.amount_micros)) {
      return std::unexpected(overflow());
    }
    auto paid = storage_posted_within(state, volume, from_s, to_s);
    if (!paid) return std::unexpected(paid.error());
    posted += *paid;
  }
  return {};
}

// The tenant's calls to other tenants' shared services in the hours that start within the
// period, one line per service and pair of prices, after `lines`; what its balance has paid of
// them added to `posted`.
Status add_service_lines(const State& state, const std::string& tenant_id, const Period& period,
                         std::vector<InvoiceLine>& lines, int64_t& posted) {
  auto ids = state.usage_by_caller.find(tenant_id);
  if (ids == state.usage_by_caller.end()) return {};
  std::map<std::tuple<std::string, int64_t, int64_t>, InvoiceLine> grouped;
  for (const std::string& id : ids->second) {
    const ServiceUsage& u = state.service_usage.at(id);
    if (u.hour_ms < period.start_ms || u.hour_ms >= period.end_ms) continue;
    if (u.requests == 0 && u.tokens == 0) continue;
    InvoiceLine& line =
        grouped[{u.service_id, u.price_per_request_micros, u.price_per_1k_tokens_micros}];
    line.service_id = u.service_id;
    line.price_per_request_micros = u.price_per_request_micros;
    line.price_per_1k_tokens_micros = u.price_per_1k_tokens_micros;
    if (__builtin_add_overflow(line.requests, u.requests, &line.requests) ||
        __builtin_add_overflow(line.tokens, u.tokens, &line.tokens) ||
        __builtin_add_overflow(line.amount_micros, u.charged_micros, &line.amount_micros) ||
        __builtin_add_overflow(posted, u.paid_micros, &posted)) {
      return std::unexpected(overflow());
    }
  }
  for (auto& [key, line] : grouped) lines.push_back(std::move(line));
  return {};
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
  const Period period = invoice_period(state, tenant_id, month_ms, now_ms);
  const int64_t from_s = period.start_ms / 1000;
  const int64_t to_s = period.end_ms / 1000;
  // Usage is read no later than the period's end: what runs on after it belongs to later months.
  const TimeMs read_at_ms = period.end_ms;
  int64_t posted = 0;  // Of the period's charges, what the ledger has already posted.
  Lines lines;
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
    auto paid = posted_within(state, instance, *usage, from_s, to_s);
    if (!paid) return std::unexpected(paid.error());
    posted += *paid;
    const EnergyUse energy = instance.energy_between(period.start_ms, period.end_ms);
    line.energy_mj += energy.energy_mj;
    line.carbon_ug += energy.carbon_ug;
  }
  if (auto ok = add_storage_lines(state, tenant_id, period, lines, posted); !ok) {
    return std::unexpected(ok.error());
  }
  DraftInvoice out{.tenant_id = tenant_id,
                   .month_ms = month_ms,
                   .period_start_ms = period.start_ms,
                   .period_end_ms = period.end_ms,
                   .customer = state.tenant(tenant_id)->details};
  out.lines.reserve(lines.size());
  int64_t subtotal = 0;
  for (auto& [group, line] : lines) {
    if (__builtin_add_overflow(subtotal, line.amount_micros, &subtotal)) {
      return std::unexpected(overflow());
    }
    out.lines.push_back(std::move(line));
  }
  const size_t resource_lines = out.lines.size();
  if (auto ok = add_service_lines(state, tenant_id, period, out.lines, posted); !ok) {
    return std::unexpected(ok.error());
  }
  for (size_t i = resource_lines; i < out.lines.size(); ++i) {
    if (__builtin_add_overflow(subtotal, out.lines[i].amount_micros, &subtotal)) {
      return std::unexpected(overflow());
    }
  }
  // Credits pay for usage, never more than the month's charges.
  out.credits_micros = std::clamp<int64_t>(promotional_credits_micros, 0, subtotal);
  if (state.tenant(tenant_id)->billing == BillingMode::kPrepaid) {
    out.prepaid = true;
    out.payments = balance_payments(state, tenant_id, period);
    // Posted usage was paid by credits first, then by the balance.
    out.payments.paid_micros =
        std::clamp<int64_t>(posted - out.credits_micros, 0, subtotal - out.credits_micros);
  }
  return out;
}

Period invoice_period(const State& state, const std::string& tenant_id, TimeMs month_ms,
                      TimeMs now_ms) {
  const TimeMs month_end_ms = next_month_start(month_ms);
  Period period{.start_ms = month_ms, .end_ms = std::min(now_ms / 1000 * 1000, month_end_ms)};
  const Invoice* before = live_invoice(state, tenant_id, month_start(month_ms - 1));
  if (before != nullptr && before->status != InvoiceStatus::kDraft && before->early) {
    period.start_ms = before->period_end_ms;
  }
  const Invoice* after = live_invoice(state, tenant_id, month_end_ms);
  if (after != nullptr && after->period_start_ms < month_end_ms) {
    period.end_ms = std::min(period.end_ms, after->period_start_ms);
  }
  period.end_ms = std::max(period.end_ms, period.start_ms);
  return period;
}

int64_t credits_applied(const State& state, const std::string& tenant_id, TimeMs month_ms,
                        TimeMs now_ms) {
  return credits_spent(state, tenant_id, month_ms,
                       std::min(next_month_start(month_ms), now_ms + 1));
}

int64_t invoice_credits(const State& state, const std::string& tenant_id, TimeMs month_ms,
                        TimeMs now_ms) {
  const Period period = invoice_period(state, tenant_id, month_ms, now_ms);
  return credits_spent(state, tenant_id, period.start_ms, std::min(period.end_ms, now_ms + 1));
}

}  // namespace allot::billing
