// The timer's money work (see money.h): posting usage, holds, running out, lapsed credits, and
// spot prices passing an instance's maximum.
#include <algorithm>

#include <fmt/format.h>

#include "common/money.h"
#include "core/kernel/lifecycle.h"
#include "core/money/metering.h"
#include "core/money/money.h"
#include "core/money/money_internal.h"
#include "core/money/storage.h"

namespace allot {
namespace {

using money::charge_to;

// The price key an instance is charged under on `node`.
meter::PriceKey key_on(const Instance& instance, const Node& node) {
  const size_t gpu =
      instance.gpu_indices.empty() ? 0 : static_cast<size_t>(instance.gpu_indices[0]);
  return {.model = node.gpus.empty() ? std::string() : node.gpus.at(gpu).model,
          .region = node.region,
          .price_class = instance.spec.price_class};
}

// What the runway costs the instance at the prices in force from now on.
int64_t runway_charge(const State& state, const Instance& instance, const Node& node, TimeMs now_ms,
                      int64_t runway_s) {
  const int64_t milli =
      int64_t{instance.milli_per_gpu()} * static_cast<int64_t>(instance.gpu_indices.size());
  const int64_t start_s = now_ms / 1000;
  return meter::usage_charge(state.prices, key_on(instance, node), milli, instance.spec.cpu_milli,
                             instance.spec.memory_mib, start_s, start_s + runway_s)
      .value_or(0);
}

// Ends spot work whose price rose past its maximum, at the second the new price took effect.
void preempt_over_max_price(Draft& draft, const std::vector<std::string>& ids, TimeMs now_ms) {
  const State& state = draft.base();
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    // On-demand and reserved work keeps running at its price: its maximum only limits placement.
    if (i.state != InstanceState::kRunning || i.spec.max_price_micros <= 0 ||
        i.spec.price_class != PriceClass::kSpot) {
      continue;
    }
    const Node* node = draft.node(i.node_id);
    if (node == nullptr) continue;
    for (const meter::Stretch& s : state.prices.charged_stretches(
             key_on(i, *node), i.started_at_ms / 1000, now_ms / 1000 + 1)) {
      if (s.price->gpu_hour_micros <= i.spec.max_price_micros) continue;
      end_instance(draft, id, InstanceState::kPreempted,
                   std::max(s.start_s * 1000, i.started_at_ms),
                   fmt::format("preempted: the spot price {} passed its maximum {}",
                               Money::from_micros(s.price->gpu_hour_micros).to_string(),
                               Money::from_micros(i.spec.max_price_micros).to_string()));
      break;
    }
  }
}

// The last whole second up to `until_ms` that the bounded tenant's money covers its work's
// charges, or nullopt when it covers them all the way (found by bisection: charges only grow with
// time).
std::optional<int64_t> last_covered_second(const Draft& draft, const Tenant& tenant,
                                           const std::vector<std::string>& ids, TimeMs now_ms,
                                           TimeMs until_ms) {
  // Storage owed comes first: volumes are not stopped when the money runs out, their work is.
  const int64_t budget = money::funds(draft.base(), tenant, now_ms) +
                         money::draft_flow(draft, tenant.id) -
                         money::storage_owed(draft, tenant.id, now_ms);
  auto accrued = [&](int64_t at_s) { return money::unposted(draft, ids, at_s * 1000); };
  int64_t hi = until_ms / 1000;
  if (accrued(hi) <= budget) return std::nullopt;
  int64_t lo = hi;
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    if (i.started_at_ms != 0) lo = std::min(lo, std::max(i.billed_to_ms, i.started_at_ms) / 1000);
  }
  // accrued(lo) <= budget unless the budget was already short; then the work stops at lo.
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (accrued(mid) <= budget) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// For a bounded tenant whose accrued charges pass what it may spend: ends its work at the last
// whole second its money covered. Returns whether it did.
bool stop_where_money_runs_out(Draft& draft, const Tenant& tenant,
                               const std::vector<std::string>& ids, TimeMs now_ms) {
  const auto covered = last_covered_second(draft, tenant, ids, now_ms, now_ms);
  if (!covered) return false;
  const int64_t lo = *covered;
  const std::string why = tenant.billing == BillingMode::kPrepaid
                              ? "stopped: the prepaid balance ran out"
                              : "stopped: the credit limit was reached";
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    const TimeMs end_ms = std::max(lo * 1000, i.started_at_ms);
    if (!is_final(i.state)) {
      end_instance(draft, id, InstanceState::kStopped, end_ms, why);
    } else if (i.started_at_ms != 0 && i.ended_at_ms > end_ms) {
      // It ended on its own after the money ran out, before the timer saw it: it is billed to
      // where the money lasted.
      Instance& capped = draft.edit_instance(id);
      capped.billing_cap_ms = end_ms;
      capped.events.push_back(InstanceEvent{end_ms, "", "billing ends here: " + why.substr(9)});
    }
  }
  return true;
}

// Posts every instance's charge since its last posting: from promotional credits first, soonest
// to lapse first, then the tenant's own account. Frees each hold first, so that money held for
// one instance can pay another's usage; holds are taken again after.
void post_usage(Draft& draft, const Tenant& tenant, const std::vector<std::string>& ids,
                TimeMs now_ms) {
  money::ensure_accounts(draft, tenant);
  std::vector<std::pair<std::string, int64_t>> credits;
  for (const ledger::Account* a : money::live_credits(draft.base().ledger, tenant.id, now_ms)) {
    credits.emplace_back(a->id, a->credit_balance());
  }
  const std::string own = tenant_account(tenant.id, tenant.billing);
  // Every hold first: the ledger counts held money as spent, so one instance's hold would keep
  // another's usage from being paid.
  for (const std::string& id : ids) money::release_hold(draft, draft.edit_instance(id));
  for (const std::string& id : ids) {
    Instance& i = draft.edit_instance(id);
    const int64_t charge = charge_to(draft.base(), i, now_ms);
    int64_t due = charge - i.billed_micros;
    ++i.postings;
    int part = 0;
    auto pay = [&](const std::string& from, int64_t amount) {
      draft.add_transfer(
          ledger::Transfer{.id = fmt::format("usage/{}/{}/{}", id, i.postings, part++),
                           .debit_account_id = from,
                           .credit_account_id = std::string(kRevenueAccount),
                           .amount = amount,
                           .code = "usage"});
    };
    for (auto& [account, left] : credits) {
      if (due <= 0) break;
      const int64_t take = std::min(left, due);
      if (take <= 0) continue;
      pay(account, take);
      left -= take;
      due -= take;
    }
    if (due > 0) pay(own, due);
    i.billed_micros = std::max(i.billed_micros, charge);
    i.billed_to_ms = is_final(i.state) ? std::max(i.ended_at_ms, i.started_at_ms) : now_ms;
    if (is_final(i.state)) i.settled = true;
  }
}

// Gives back what is left of credits that lapsed.
void expire_credits(Draft& draft, TimeMs now_ms) {
  const ledger::Ledger& ledger = draft.base().ledger;
  for (const auto& [id, account] : ledger.accounts()) {
    if (account.code != "tenant_credit" || account.user_data == 0 || account.user_data > now_ms) {
      continue;
    }
    int64_t left = account.credit_balance();
    for (const ledger::Transfer& t : draft.transfers()) {
      if (t.kind == ledger::TransferKind::kSingle && t.debit_account_id == id) left -= t.amount;
    }
    if (left <= 0) continue;
    draft.add_transfer(ledger::Transfer{.id = "expire/" + id,
                                        .debit_account_id = id,
                                        .credit_account_id = std::string(kPromotionsAccount),
                                        .amount = left,
                                        .code = "credit_expiry"});
  }
}

}  // namespace

std::optional<TimeMs> money_runs_out_at(const State& state, const std::string& tenant_id,
                                        TimeMs now_ms, TimeMs until_ms) {
  const Tenant* tenant = state.tenant(tenant_id);
  if (tenant == nullptr || !tenant->money_limited()) return std::nullopt;
  const Draft draft(state);
  const auto ids = money::money_instances(draft, tenant_id);
  const auto covered = last_covered_second(draft, *tenant, ids, now_ms, until_ms);
  if (!covered) return std::nullopt;
  return (*covered + 1) * 1000;
}

void hold_runway(Draft& draft, Instance& instance, const Node& node, TimeMs now_ms,
                 const CoreOptions& options) {
  const Tenant* tenant = draft.base().tenant(instance.tenant_id);
  if (tenant == nullptr || !tenant->money_limited() || options.runway_s <= 0) return;
  const int64_t want = runway_charge(draft.base(), instance, node, now_ms, options.runway_s);
  // Holds sit on the tenant's own account, which the ledger keeps from going below zero when
  // prepaid: a hold takes no more than that account has free.
  const std::string own = tenant_account(tenant->id, tenant->billing);
  int64_t free_on_own = money::posted(draft.base().ledger, own) +
                        money::draft_flow(draft, tenant->id) -
                        money::held(draft, money::money_instances(draft, tenant->id));
  if (tenant->billing == BillingMode::kPostpaid) free_on_own += tenant->credit_limit_micros;
  const int64_t amount = std::min({want, money::available(draft, *tenant, now_ms), free_on_own});
  if (amount <= 0) return;
  money::ensure_accounts(draft, *tenant);
  instance.hold_id = fmt::format("hold/{}/{}", instance.id, instance.postings);
  instance.hold_micros = amount;
  draft.add_transfer(ledger::Transfer{.id = instance.hold_id,
                                      .debit_account_id = own,
                                      .credit_account_id = std::string(kRevenueAccount),
                                      .amount = amount,
                                      .kind = ledger::TransferKind::kPending,
                                      .code = "hold"});
}

void settle_money(Draft& draft, TimeMs now_ms, const CoreOptions& options, bool post_all) {
  const State& state = draft.base();
  std::set<std::string> tenants;
  for (const auto& [tenant_id, ids] : state.unsettled_by_tenant) tenants.insert(tenant_id);
  for (const auto& [tenant_id, ids] : state.unsettled_volumes) tenants.insert(tenant_id);
  draft.for_each_changed_instance([&](const Instance& i) {
    if ((i.started_at_ms != 0 || !i.hold_id.empty()) && !i.settled) tenants.insert(i.tenant_id);
  });
  for (const std::string& tenant_id : tenants) {
    const Tenant* tenant = state.tenant(tenant_id);
    if (tenant == nullptr) continue;
    const std::vector<std::string> ids = money::money_instances(draft, tenant_id);
    preempt_over_max_price(draft, ids, now_ms);
    // Running out is checked every time, even when the books are being closed.
    const bool ran_out =
        tenant->money_limited() && stop_where_money_runs_out(draft, *tenant, ids, now_ms);
    bool due = post_all || ran_out;
    for (const std::string& id : ids) {
      const Instance& i = *draft.instance(id);
      const TimeMs since = std::max(i.billed_to_ms, i.started_at_ms);
      due = due || is_final(i.state) ||
            (since != 0 &&
             (now_ms - since >= options.rating_interval_ms || since < month_start(now_ms)));
    }
    if (due) post_usage(draft, *tenant, ids, now_ms);
    // Storage before the runways' holds: what volumes owe is paid before work is given more.
    post_storage(draft, *tenant, now_ms, options.rating_interval_ms, post_all);
    if (!due) continue;
    for (const std::string& id : ids) {
      Instance& i = draft.edit_instance(id);
      const Node* node = draft.node(i.node_id);
      if (is_final(i.state) || i.state == InstanceState::kQueued || node == nullptr) continue;
      hold_runway(draft, i, *node, now_ms, options);
    }
  }
  expire_credits(draft, now_ms);
}

}  // namespace allot
