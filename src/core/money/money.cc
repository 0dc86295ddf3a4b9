#include "core/money/money.h"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"
#include "core/money/metering.h"
#include "core/money/money_internal.h"
#include "core/money/storage.h"

namespace allot {

namespace money {

void ensure_account(Draft& draft, const ledger::Account& account) {
  if (draft.base().ledger.account(account.id) != nullptr) return;
  for (const ledger::Account& added : draft.accounts()) {
    if (added.id == account.id) return;
  }
  draft.add_account(account);
}

void ensure_accounts(Draft& draft, const Tenant& tenant) {
  for (std::string_view id : {kFundingAccount, kPromotionsAccount, kRevenueAccount}) {
    ensure_account(draft, ledger::Account{.id = std::string(id), .code = "operator"});
  }
  ensure_account(draft, ledger::Account{.id = tenant_account(tenant.id, tenant.billing),
                                        .code = "tenant",
                                        .debits_must_not_exceed_credits =
                                            tenant.billing == BillingMode::kPrepaid});
}

int64_t posted(const ledger::Ledger& ledger, const std::string& id) {
  const ledger::Account* account = ledger.account(id);
  return account == nullptr ? 0 : account->credit_balance();
}

std::vector<const ledger::Account*> live_credits(const ledger::Ledger& ledger,
                                                 const std::string& tenant_id, TimeMs now_ms) {
  const std::string prefix = credit_account(tenant_id, "");
  std::vector<const ledger::Account*> out;
  for (auto it = ledger.accounts().lower_bound(prefix);
       it != ledger.accounts().end() && it->first.starts_with(prefix); ++it) {
    const ledger::Account& a = it->second;
    if ((a.user_data == 0 || a.user_data > now_ms) && a.credit_balance() > 0) out.push_back(&a);
  }
  // The soonest to lapse is spent first; credits that never lapse last.
  auto lapse = [](const ledger::Account* a) {
    return a->user_data == 0 ? std::numeric_limits<int64_t>::max() : a->user_data;
  };
  std::sort(out.begin(), out.end(), [&](const auto* a, const auto* b) {
    return std::pair(lapse(a), a->id) < std::pair(lapse(b), b->id);
  });
  return out;
}

int64_t funds(const State& state, const Tenant& tenant, TimeMs now_ms) {
  int64_t total = posted(state.ledger, tenant_account(tenant.id, tenant.billing));
  for (const ledger::Account* credit : live_credits(state.ledger, tenant.id, now_ms)) {
    total += credit->credit_balance();
  }
  if (tenant.billing == BillingMode::kPostpaid) total += tenant.credit_limit_micros;
  return total;
}

int64_t draft_flow(const Draft& draft, const std::string& tenant_id) {
  const std::string prefix = fmt::format("tenant/{}/", tenant_id);
  int64_t flow = 0;
  for (const ledger::Transfer& t : draft.transfers()) {
    // Lapsed credits are already left out of funds(); pending holds are counted per instance.
    if (t.kind != ledger::TransferKind::kSingle || t.code == "credit_expiry") continue;
    if (t.debit_account_id.starts_with(prefix)) flow -= t.amount;
    if (t.credit_account_id.starts_with(prefix)) flow += t.amount;
  }
  return flow;
}

int64_t charge_to(const State& state, const Instance& instance, TimeMs at_ms) {
  auto usage = usage_of(state, instance, at_ms);
  if (!usage) return 0;
  usage->end_s = std::min(usage->end_s, std::max(usage->start_s, at_ms / 1000));
  return charge_of(state, *usage).value_or(0);
}

std::vector<std::string> money_instances(const Draft& draft, const std::string& tenant_id) {
  std::set<std::string> ids;
  if (auto it = draft.base().unsettled_by_tenant.find(tenant_id);
      it != draft.base().unsettled_by_tenant.end()) {
    ids = it->second;
  }
  draft.for_each_changed_instance([&](const Instance& i) {
    if (i.tenant_id == tenant_id) ids.insert(i.id);
  });
  std::vector<std::string> out;
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    if ((i.started_at_ms != 0 || !i.hold_id.empty()) && !i.settled) out.push_back(id);
  }
  return out;
}

int64_t unposted(const Draft& draft, const std::vector<std::string>& ids, TimeMs at_ms) {
  int64_t total = 0;
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    total += std::max<int64_t>(0, charge_to(draft.base(), i, at_ms) - i.billed_micros);
  }
  return total;
}

int64_t held(const Draft& draft, const std::vector<std::string>& ids) {
  int64_t total = 0;
  for (const std::string& id : ids) total += draft.instance(id)->hold_micros;
  return total;
}

void release_hold(Draft& draft, Instance& instance) {
  if (instance.hold_id.empty()) return;
  draft.add_transfer(ledger::Transfer{.id = instance.hold_id + "/void",
                                      .kind = ledger::TransferKind::kVoidPending,
                                      .pending_id = instance.hold_id,
                                      .code = "hold"});
  instance.hold_id.clear();
  instance.hold_micros = 0;
}

int64_t committed(const Draft& draft, const std::vector<std::string>& ids, TimeMs at_ms) {
  int64_t total = 0;
  for (const std::string& id : ids) {
    const Instance& i = *draft.instance(id);
    // A hold is taken for the runway ahead when usage is posted (or the work placed), so the
    // usage accrued since is spent out of it: counting both would count that usage twice.
    const int64_t accrued =
        std::max<int64_t>(0, charge_to(draft.base(), i, at_ms) - i.billed_micros);
    total += std::max(accrued, i.hold_micros);
  }
  return total;
}

int64_t available(const Draft& draft, const Tenant& tenant, TimeMs now_ms) {
  const auto ids = money_instances(draft, tenant.id);
  return funds(draft.base(), tenant, now_ms) + draft_flow(draft, tenant.id) -
         committed(draft, ids, now_ms) - storage_owed(draft, tenant.id, now_ms);
}

}  // namespace money

Result<Balance> balance_of(const State& state, const std::string& tenant_id, TimeMs now_ms) {
  const Tenant* tenant = state.tenant(tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", tenant_id));
  const Draft draft(state);
  const auto ids = money::money_instances(draft, tenant_id);
  Balance b{.cash_micros = money::posted(state.ledger, tenant_account(tenant_id, tenant->billing)),
            .held_micros = money::held(draft, ids),
            .unposted_micros = money::unposted(draft, ids, now_ms) +
                               money::storage_owed(draft, tenant_id, now_ms)};
  for (const ledger::Account* credit : money::live_credits(state.ledger, tenant_id, now_ms)) {
    b.credits_micros += credit->credit_balance();
  }
  if (tenant->money_limited()) b.available_micros = money::available(draft, *tenant, now_ms);
  return b;
}

int64_t credits_spent(const State& state, const std::string& tenant_id, TimeMs from_ms,
                      TimeMs to_ms) {
  const std::string prefix = credit_account(tenant_id, "");
  int64_t total = 0;
  for (const ledger::Transfer& t : state.ledger.transfers()) {
    if ((t.code == "usage" || t.code == "storage") && t.debit_account_id.starts_with(prefix) &&
        t.created_at_ms >= from_ms && t.created_at_ms < to_ms) {
      total += t.amount;
    }
  }
  return total;
}

std::optional<std::string> funds_block(const Draft& draft, const std::string& tenant_id,
                                       TimeMs now_ms) {
  const Tenant* tenant = draft.base().tenant(tenant_id);
  if (tenant == nullptr || !tenant->money_limited()) return std::nullopt;
  if (money::available(draft, *tenant, now_ms) > 0) return std::nullopt;
  return tenant->billing == BillingMode::kPrepaid
             ? std::string("funds: the prepaid balance is used up")
             : std::string("funds: the credit limit is reached");
}

Result<Rows> apply(const State& state, const Topup& c, TimeMs now_ms, const Placing& /*placing*/) {
  if (auto ok = check_idempotency_key("a top-up id", c.id); !ok) {
    return std::unexpected(ok.error());
  }
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  if (tenant->is_operator) {
    return fail(ErrorCode::kInvalidArgument, "the operator's own tenant holds no balance");
  }
  if (c.amount_micros <= 0 || c.amount_micros > limits::kMaxMoneyMicros) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("an amount is more than 0 and at most {}",
                            Money::from_micros(limits::kMaxMoneyMicros).to_string()));
  }
  if (!c.credit && c.expires_at_ms != 0) {
    return fail(ErrorCode::kInvalidArgument, "only a credit expires; money paid in does not");
  }
  if (c.credit && c.expires_at_ms != 0 && c.expires_at_ms <= now_ms) {
    return fail(ErrorCode::kInvalidArgument, "a credit must expire in the future");
  }
  Draft draft(state);
  money::ensure_accounts(draft, *tenant);
  std::string to = tenant_account(tenant->id, tenant->billing);
  if (c.credit) {
    to = credit_account(tenant->id, c.id);
    money::ensure_account(draft, ledger::Account{.id = to,
                                                 .code = "tenant_credit",
                                                 .debits_must_not_exceed_credits = true,
                                                 .user_data = c.expires_at_ms});
  }
  const ledger::Transfer transfer{
      .id = "topup/" + c.id,
      .debit_account_id = std::string(c.credit ? kPromotionsAccount : kFundingAccount),
      .credit_account_id = to,
      .amount = c.amount_micros,
      .code = c.credit ? "credit" : "topup"};
  if (const ledger::Transfer* done = state.ledger.transfer(transfer.id)) {
    const ledger::Account* account = state.ledger.account(to);
    if (done->debit_account_id == transfer.debit_account_id &&
        done->credit_account_id == transfer.credit_account_id && done->amount == c.amount_micros &&
        (account == nullptr || account->user_data == c.expires_at_ms)) {
      return Rows{};  // The same top-up again: it happened once.
    }
    return fail(ErrorCode::kConflict,
                fmt::format("top-up id {} was used for a different top-up", c.id));
  }
  draft.add_transfer(transfer);
  return draft.rows();
}

Result<Rows> apply(const State& state, const SetBilling& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  if (tenant->is_operator) {
    return fail(ErrorCode::kInvalidArgument, "the operator's own tenant is not billed");
  }
  if (c.credit_limit_micros < 0 || c.credit_limit_micros > limits::kMaxMoneyMicros) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a credit limit is 0 (none) to {}",
                            Money::from_micros(limits::kMaxMoneyMicros).to_string()));
  }
  if (c.mode == BillingMode::kPrepaid && c.credit_limit_micros != 0) {
    return fail(ErrorCode::kInvalidArgument, "a prepaid tenant has no credit limit");
  }
  Tenant changed = *tenant;
  changed.billing = c.mode;
  changed.credit_limit_micros = c.credit_limit_micros;
  if (changed == *tenant) return Rows{};
  Draft draft(state);
  if (c.mode != tenant->billing) {
    const std::string from = tenant_account(tenant->id, tenant->billing);
    const int64_t balance = money::posted(state.ledger, from);
    if (balance < 0) {
      return fail(ErrorCode::kConflict,
                  fmt::format("the tenant owes {}; pay it in before it turns prepaid",
                              Money::from_micros(-balance).to_string()));
    }
    // Its work's holds were on the old account: they are freed and taken again on the new one
    // at the next settlement.
    for (const std::string& id : money::money_instances(draft, tenant->id)) {
      money::release_hold(draft, draft.edit_instance(id));
    }
    money::ensure_accounts(draft, changed);
    if (balance > 0) {
      draft.add_transfer(ledger::Transfer{
          .id = fmt::format("billing/{}/{}", tenant->id, state.ledger.requests().size()),
          .debit_account_id = from,
          .credit_account_id = tenant_account(tenant->id, c.mode),
          .amount = balance,
          .code = "billing_change"});
    }
  }
  Rows rows = draft.rows();
  rows.insert(rows.begin(), changed);
  return rows;
}

// The ledger is changed by Core::apply itself, all of a command's transfers at once.
void put(State& /*state*/, const ledger::Account& /*account*/) {}

void put(State& /*state*/, const LedgerEntry& /*entry*/) {}

}  // namespace allot
