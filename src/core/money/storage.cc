#include "core/money/storage.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/model/accounts.h"
#include "core/money/money_internal.h"

namespace allot {
namespace {

// What the draft's posted transfers add to (or take from) one account.
int64_t flow_of(const Draft& draft, const std::string& account) {
  int64_t flow = 0;
  for (const ledger::Transfer& t : draft.transfers()) {
    if (t.kind != ledger::TransferKind::kSingle) continue;
    if (t.debit_account_id == account) flow -= t.amount;
    if (t.credit_account_id == account) flow += t.amount;
  }
  return flow;
}

// The storage's charge from its start up to at_s.
Result<int64_t> charge_upto(const State& state, const StorageUse& use, int64_t at_s) {
  const int64_t end_s = std::clamp(at_s, use.start_s, use.end_s);
  return meter::storage_charge(state.prices.stretches(use.key, use.start_s, end_s), use.gb);
}

// The volume's whole charge up to at_ms (0 if it leaves int64: nothing that large is posted).
int64_t volume_charge_to(const State& state, const Volume& volume, TimeMs at_ms) {
  return charge_upto(state, storage_use(volume, at_ms), at_ms / 1000).value_or(0);
}

}  // namespace

StorageUse storage_use(const Volume& volume, TimeMs now_ms) {
  const TimeMs end_ms = volume.deleted_at_ms != 0 ? std::min(volume.deleted_at_ms, now_ms) : now_ms;
  const int64_t start_s = volume.created_at_ms / 1000;
  return StorageUse{.key = meter::storage_key(volume.region),
                    .gb = volume.size_gb,
                    .start_s = start_s,
                    .end_s = std::max(start_s, end_ms / 1000)};
}

Result<int64_t> storage_between(const State& state, const StorageUse& use, int64_t from_s,
                                int64_t to_s) {
  if (to_s <= from_s) return 0;
  auto to = charge_upto(state, use, to_s);
  if (!to) return to;
  auto from = charge_upto(state, use, from_s);
  if (!from) return from;
  return *to - *from;
}

Result<int64_t> gb_seconds_within(const StorageUse& use, int64_t from_s, int64_t to_s) {
  const int64_t seconds =
      std::max<int64_t>(0, std::min(use.end_s, to_s) - std::max(use.start_s, from_s));
  int64_t out = 0;
  if (__builtin_mul_overflow(use.gb, seconds, &out)) {
    return fail(ErrorCode::kOverflow, "GB-seconds leave the int64 range");
  }
  return out;
}

Result<int64_t> storage_posted_within(const State& state, const Volume& volume, int64_t from_s,
                                      int64_t to_s) {
  if (to_s <= from_s) return 0;
  const StorageUse use = storage_use(volume, to_s * 1000);
  auto to = charge_upto(state, use, to_s);
  if (!to) return to;
  auto from = charge_upto(state, use, from_s);
  if (!from) return from;
  return std::min(volume.billed_micros, *to) - std::min(volume.billed_micros, *from);
}

namespace money {

int64_t storage_owed(const Draft& draft, const std::string& tenant_id, TimeMs at_ms) {
  const auto it = draft.base().unsettled_volumes.find(tenant_id);
  if (it == draft.base().unsettled_volumes.end()) return 0;
  int64_t total = 0;
  for (const std::string& id : it->second) {
    const Volume& v = *draft.volume(id);
    total += std::max<int64_t>(0, volume_charge_to(draft.base(), v, at_ms) - v.billed_micros);
  }
  return total;
}

}  // namespace money

void post_storage(Draft& draft, const Tenant& tenant, TimeMs now_ms, TimeMs rating_interval_ms,
                  bool post_all) {
  const State& state = draft.base();
  const auto unsettled = state.unsettled_volumes.find(tenant.id);
  if (unsettled == state.unsettled_volumes.end()) return;
  std::vector<std::string> due;
  for (const std::string& id : unsettled->second) {
    const Volume& v = *draft.volume(id);
    const TimeMs since = std::max(v.billed_to_ms, v.created_at_ms);
    if (post_all || v.deleted_at_ms != 0 || now_ms - since >= rating_interval_ms ||
        since < month_start(now_ms)) {
      due.push_back(id);
    }
  }
  if (due.empty()) return;
  money::ensure_accounts(draft, tenant);
  const std::string own = tenant_account(tenant.id, tenant.billing);
  const int64_t held = money::held(draft, money::money_instances(draft, tenant.id));
  for (const std::string& id : due) {
    Volume& v = draft.edit_volume(id);
    const TimeMs to_ms = v.deleted_at_ms != 0 ? v.deleted_at_ms : now_ms;
    const int64_t charge = volume_charge_to(state, v, to_ms);
    int64_t owed = charge - v.billed_micros;
    ++v.postings;
    int part = 0;
    auto pay = [&](const std::string& from, int64_t amount) {
      draft.add_transfer(
          ledger::Transfer{.id = fmt::format("storage/{}/{}/{}", id, v.postings, part++),
                           .debit_account_id = from,
                           .credit_account_id = std::string(kRevenueAccount),
                           .amount = amount,
                           .code = "storage"});
      v.billed_micros += amount;
      owed -= amount;
    };
    for (const ledger::Account* credit : money::live_credits(state.ledger, tenant.id, now_ms)) {
      if (owed <= 0) break;
      const int64_t left = credit->credit_balance() + flow_of(draft, credit->id);
      if (left > 0) pay(credit->id, std::min(left, owed));
    }
    if (owed > 0) {
      int64_t take = owed;
      // The ledger keeps a prepaid account from going below zero, holds included.
      if (tenant.billing == BillingMode::kPrepaid) {
        take = std::clamp<int64_t>(money::posted(state.ledger, own) + flow_of(draft, own) - held, 0,
                                   owed);
      }
      if (take > 0) pay(own, take);
    }
    v.billed_to_ms = to_ms;
    v.settled = v.deleted_at_ms != 0 && v.billed_micros >= charge;
  }
}

}  // namespace allot
