#include "core/core.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/books.h"
#include "core/budgets.h"
#include "core/idle.h"
#include "core/image_pulls.h"
#include "core/invoice_ops.h"
#include "core/money.h"
#include "core/pools.h"
#include "core/regions.h"
#include "core/registries.h"
#include "core/spot_rules.h"
#include "core/validate.h"

namespace allot {
namespace {

Error not_found(std::string_view what, std::string_view id) {
  return Error{ErrorCode::kNotFound, fmt::format("no {} {}", what, id)};
}

template <typename Map, typename Pred>
size_t count_if_values(const Map& map, Pred pred) {
  return static_cast<size_t>(
      std::count_if(map.begin(), map.end(), [&](const auto& entry) { return pred(entry.second); }));
}

size_t live_operator_admins(const State& state) {
  return count_if_values(
      state.users, [](const User& u) { return u.role == Role::kOperatorAdmin && !u.disabled; });
}

Result<Rows> create_tenant(const State& state, const CreateTenant& c, TimeMs now_ms) {
  if (auto ok = check_id("id", c.id, "ten"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (state.tenant(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "tenant id taken");
  if (state.tenants.size() >= limits::kMaxTenants) {
    return fail(ErrorCode::kLimitExceeded, "the cloud holds the most tenants it may");
  }
  for (const auto& [id, tenant] : state.tenants) {
    if (tenant.name == c.name) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a tenant named '{}' exists", c.name));
    }
    if (c.is_operator && tenant.is_operator) {
      return fail(ErrorCode::kAlreadyExists, "the operator tenant exists");
    }
  }
  return Rows{
      Tenant{.id = c.id, .name = c.name, .is_operator = c.is_operator, .created_at_ms = now_ms}};
}

Result<Rows> create_project(const State& state, const CreateProject& c, TimeMs now_ms) {
  if (auto ok = check_id("id", c.id, "prj"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (state.tenant(c.tenant_id) == nullptr)
    return std::unexpected(not_found("tenant", c.tenant_id));
  if (state.project(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "project id taken");
  size_t live = 0;
  for (const auto& [id, project] : state.projects) {
    if (project.tenant_id != c.tenant_id || project.deleted_at_ms != 0) continue;
    ++live;
    if (project.name == c.name) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a project named '{}' exists", c.name));
    }
  }
  if (live >= limits::kMaxProjectsPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most projects it may");
  }
  return Rows{
      Project{.id = c.id, .tenant_id = c.tenant_id, .name = c.name, .created_at_ms = now_ms}};
}

Result<Rows> delete_project(const State& state, const DeleteProject& c, TimeMs now_ms) {
  const Project* project = state.project(c.id);
  if (project == nullptr || project->deleted_at_ms != 0) {
    return std::unexpected(not_found("project", c.id));
  }
  Project deleted = *project;
  deleted.deleted_at_ms = now_ms;
  return Rows{deleted};
}

Status check_role_fits_tenant(const Tenant& tenant, Role role) {
  if (role == Role::kOperatorAdmin && !tenant.is_operator) {
    return fail(ErrorCode::kInvalidArgument,
                "only users of the operator tenant can be operator admins");
  }
  return {};
}

Result<Rows> create_user(const State& state, const CreateUser& c, TimeMs now_ms) {
  if (auto ok = check_id("id", c.id, "usr"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_email(c.email); !ok) return std::unexpected(ok.error());
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  if (auto ok = check_role_fits_tenant(*tenant, c.role); !ok) return std::unexpected(ok.error());
  if (state.user(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "user id taken");
  size_t members = 0;
  for (const auto& [id, user] : state.users) {
    if (user.tenant_id != c.tenant_id) continue;
    ++members;
    if (user.email == c.email) {
      return fail(ErrorCode::kAlreadyExists, fmt::format("a user with e-mail {} exists", c.email));
    }
  }
  if (members >= limits::kMaxUsersPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most users it may");
  }
  return Rows{User{.id = c.id,
                   .tenant_id = c.tenant_id,
                   .name = c.name,
                   .email = c.email,
                   .role = c.role,
                   .created_at_ms = now_ms}};
}

Result<Rows> update_user(const State& state, const UpdateUser& c) {
  const User* current = state.user(c.id);
  if (current == nullptr) return std::unexpected(not_found("user", c.id));
  User next = *current;
  if (c.name) {
    if (auto ok = check_name("name", *c.name); !ok) return std::unexpected(ok.error());
    next.name = *c.name;
  }
  if (c.role) {
    const Tenant* tenant = state.tenant(current->tenant_id);
    assert(tenant != nullptr);
    if (auto ok = check_role_fits_tenant(*tenant, *c.role); !ok) return std::unexpected(ok.error());
    next.role = *c.role;
  }
  if (c.disabled) next.disabled = *c.disabled;
  const bool was_admin = current->role == Role::kOperatorAdmin && !current->disabled;
  const bool is_admin = next.role == Role::kOperatorAdmin && !next.disabled;
  if (was_admin && !is_admin && live_operator_admins(state) == 1) {
    return fail(ErrorCode::kConflict, "the last operator admin cannot be demoted or disabled");
  }
  if (next == *current) return Rows{};
  return Rows{next};
}

Result<Rows> create_key(const State& state, const CreateKey& c, TimeMs now_ms) {
  if (auto ok = check_id("id", c.id, "key"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_name("name", c.name); !ok) return std::unexpected(ok.error());
  const User* user = state.user(c.user_id);
  if (user == nullptr) return std::unexpected(not_found("user", c.user_id));
  if (user->disabled) return fail(ErrorCode::kConflict, "the user is disabled");
  if (state.key(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "key id taken");
  if (c.token_hash.size() != 64) return fail(ErrorCode::kInvalidArgument, "bad key hash");
  if (state.key_for_hash(c.token_hash) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "that key is already registered");
  }
  const size_t live = count_if_values(
      state.keys, [&](const ApiKey& k) { return k.user_id == c.user_id && k.revoked_at_ms == 0; });
  if (live >= limits::kMaxKeysPerUser) {
    return fail(ErrorCode::kLimitExceeded, "the user holds the most live keys it may");
  }
  return Rows{ApiKey{.id = c.id,
                     .user_id = c.user_id,
                     .tenant_id = user->tenant_id,
                     .name = c.name,
                     .prefix = c.prefix,
                     .token_hash = c.token_hash,
                     .created_at_ms = now_ms}};
}

Result<Rows> revoke_key(const State& state, const RevokeKey& c, TimeMs now_ms) {
  const ApiKey* key = state.key(c.id);
  if (key == nullptr) return std::unexpected(not_found("key", c.id));
  // Revoking twice is harmless: the key stays revoked from the first time.
  if (key->revoked_at_ms != 0) return Rows{};
  ApiKey revoked = *key;
  revoked.revoked_at_ms = now_ms;
  return Rows{revoked};
}

// Applies a command's money to the ledger: its new accounts, then its transfers as one linked
// chain, all or none. On success each transfer's row gets its place in the journal and the
// transfer as the ledger recorded it; on failure the ledger is as it was.
Status apply_money(ledger::Ledger& ledger, Rows& rows, TimeMs now_ms) {
  std::vector<std::string> created;
  std::vector<ledger::Transfer> chain;
  auto undo = [&] {
    for (const std::string& id : created) ledger.remove_empty_account(id);
  };
  for (Row& row : rows) {
    if (auto* account = std::get_if<ledger::Account>(&row)) {
      if (ledger.account(account->id) == nullptr) created.push_back(account->id);
      if (auto ok = ledger.create_account(*account, now_ms); !ok) {
        undo();
        return ok;
      }
      account->created_at_ms = now_ms;
    } else if (const auto* entry = std::get_if<LedgerEntry>(&row)) {
      chain.push_back(entry->transfer);
    }
  }
  if (chain.empty()) return {};
  for (size_t i = 0; i + 1 < chain.size(); ++i) chain[i].linked = true;
  const size_t first = ledger.requests().size();
  const std::vector<Status> results = ledger.create_transfers(chain, now_ms);
  for (size_t i = 0; i < results.size(); ++i) {
    // The chain fails as one; the transfer that failed says why, the others name it.
    if (!results[i] && results[i].error().code != ErrorCode::kLinkedFailed) {
      undo();
      return std::unexpected(Error{results[i].error().code,
                                   fmt::format("{}: {}", chain[i].id, results[i].error().message)});
    }
  }
  assert(ledger.requests().size() == first + chain.size());
  size_t next = first;
  for (Row& row : rows) {
    if (auto* entry = std::get_if<LedgerEntry>(&row)) {
      entry->seq = static_cast<int64_t>(next);
      entry->transfer = ledger.requests()[next++];
    }
  }
  return {};
}

}  // namespace

Result<std::vector<Row>> Core::apply(const Command& command, TimeMs now_ms) {
  Result<Rows> rows = std::visit(
      [&](const auto& c) -> Result<Rows> {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, CreateTenant>) return create_tenant(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateProject>) return create_project(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteProject>) return delete_project(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateUser>) return create_user(state_, c, now_ms);
        if constexpr (std::is_same_v<T, UpdateUser>) return update_user(state_, c);
        if constexpr (std::is_same_v<T, CreateKey>) return create_key(state_, c, now_ms);
        if constexpr (std::is_same_v<T, RevokeKey>) return revoke_key(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateJoinToken>) {
          return create_join_token(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, RevokeJoinToken>) {
          return revoke_join_token(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, JoinNode>) return join_node(state_, c, now_ms);
        if constexpr (std::is_same_v<T, NodeHeartbeat>) {
          return node_heartbeat(state_, c, now_ms, Placing{*scheduler_, options_});
        }
        if constexpr (std::is_same_v<T, SetNodeAdmin>) return set_node_admin(state_, c, now_ms);
        if constexpr (std::is_same_v<T, RevokeNodeCredential>) {
          return revoke_node_credential(state_, c);
        }
        if constexpr (std::is_same_v<T, DeleteNode>) return delete_node(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateInstance>) {
          return create_instance(state_, c, now_ms, Placing{*scheduler_, options_});
        }
        if constexpr (std::is_same_v<T, StopInstance>)
          return stop_instance(state_, c, now_ms, Placing{*scheduler_, options_});
        if constexpr (std::is_same_v<T, SetQuota>) return set_quota(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteQuota>) return delete_quota(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateReservation>) {
          return create_reservation(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, CancelReservation>) {
          return cancel_reservation(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, SetTenantWeight>) return set_tenant_weight(state_, c);
        if constexpr (std::is_same_v<T, SetPrice>) return set_price(state_, c, now_ms);
        if constexpr (std::is_same_v<T, Topup>) return topup(state_, c, now_ms);
        if constexpr (std::is_same_v<T, SetBilling>) return set_billing(state_, c);
        if constexpr (std::is_same_v<T, SetBudget>) return set_budget(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteBudget>) return delete_budget(state_, c, now_ms);
        if constexpr (std::is_same_v<T, Tick>)
          return tick(state_, c, now_ms, Placing{*scheduler_, options_});
        if constexpr (std::is_same_v<T, DraftInvoice>) return draft_invoice(state_, c, now_ms);
        if constexpr (std::is_same_v<T, FinalizeInvoice>) {
          return finalize_invoice(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, MarkInvoicePaid>) {
          return mark_invoice_paid(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, VoidInvoice>) return void_invoice(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreateCreditNote>) {
          return create_credit_note(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, CreateAsset>) return create_asset(state_, c, now_ms);
        if constexpr (std::is_same_v<T, ChangeAssetEstimate>) {
          return change_asset_estimate(state_, c);
        }
        if constexpr (std::is_same_v<T, RetireAsset>) return retire_asset(state_, c, now_ms);
        if constexpr (std::is_same_v<T, SetSite>) return set_site(state_, c);
        if constexpr (std::is_same_v<T, AddSiteRate>) return add_site_rate(state_, c, now_ms);
        if constexpr (std::is_same_v<T, AddFixedCost>) return add_fixed_cost(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteFixedCost>) {
          return delete_fixed_cost(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, SetRentalPrice>) return set_rental_price(state_, c, now_ms);
        if constexpr (std::is_same_v<T, CreatePool>) return create_pool(state_, c, now_ms);
        if constexpr (std::is_same_v<T, UpdatePool>) return update_pool(state_, c);
        if constexpr (std::is_same_v<T, DeletePool>) return delete_pool(state_, c, now_ms);
        if constexpr (std::is_same_v<T, ScaleUpPool>) return scale_up_pool(state_, c, now_ms);
        if constexpr (std::is_same_v<T, RetirePoolNode>) {
          return retire_pool_node(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, RecordPoolNode>) {
          return record_pool_node(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, SetSpotRule>) return set_spot_rule(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteSpotRule>) return delete_spot_rule(state_, c);
        if constexpr (std::is_same_v<T, SetLatency>) return set_latency(state_, c, now_ms);
        if constexpr (std::is_same_v<T, DeleteLatency>) return delete_latency(state_, c, now_ms);
        if constexpr (std::is_same_v<T, SetBillingDetails>) return set_billing_details(state_, c);
        if constexpr (std::is_same_v<T, SetRegistryCredential>) {
          return set_registry_credential(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, DeleteRegistryCredential>) {
          return delete_registry_credential(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, RequestImagePull>) {
          return request_image_pull(state_, c, now_ms);
        }
        if constexpr (std::is_same_v<T, SetProjectIdle>) {
          return set_project_idle(state_, c, options_);
        }
      },
      command);
  if (!rows) return rows;
  if (auto ok = apply_money(state_.ledger, *rows, now_ms); !ok) return std::unexpected(ok.error());
  const int64_t last_event_seq = state_.last_event_seq;
  restore(*rows);
  if (options_.check_invariants != InvariantCheck::kOff) check(last_event_seq, *rows);
  return rows;
}

void Core::check(int64_t last_event_seq, std::span<const Row> rows) {
  ++checks_;
  std::vector<kernel::Violation> found = kernel::check_command(last_event_seq, rows);
  // The whole state's check reads every node and instance. Up to kCheckEveryCommandObjects of
  // them it runs after every command; beyond, after every n-th so that its cost per command stays
  // that of a state of that size (a large simulation would otherwise spend its time checking).
  const size_t objects = state_.nodes.size() + state_.instances.size();
  if (++commands_unchecked_ * kCheckEveryCommandObjects >= objects) {
    commands_unchecked_ = 0;
    std::vector<kernel::Violation> of_state = kernel::check_state(state_);
    found.insert(found.end(), of_state.begin(), of_state.end());
  }
  if (found.empty()) return;
  if (options_.check_invariants == InvariantCheck::kAbort) {
    std::fputs(("invariant violated after a command:\n" + kernel::describe(found)).c_str(), stderr);
    std::abort();
  }
  for (kernel::Violation& v : found) {
    if (std::ranges::find(violations_, v) == violations_.end()) violations_.push_back(std::move(v));
  }
}

Status Core::restore_ledger(ledger::Ledger ledger) {
  const auto sums = ledger.sums();
  if (sums.posted != 0 || sums.pending != 0) {
    return fail(ErrorCode::kInternal, "the ledger does not sum to zero");
  }
  state_.ledger = std::move(ledger);
  return {};
}

void Core::restore(std::span<const Row> rows) {
  for (const Row& row : rows) state_.put(row);
}

}  // namespace allot
