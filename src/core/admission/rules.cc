// Quotas, reservations and fair-share weights: the operator's rules on who may hold which GPUs.
#include <algorithm>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/admission/admission.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

Status check_model(std::string_view field, const std::string& model, bool required) {
  if (model.empty() && !required) return {};
  if (!is_known_gpu_model(model)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: unknown GPU model '{}'", field, model));
  }
  return {};
}

// GPUs of `model` (a model or family) in the cluster, healthy or not, on nodes not lost.
int64_t gpus_of_model(const State& state, const std::string& model) {
  int64_t count = 0;
  for (const auto& [id, node] : state.nodes) {
    if (node.lost) continue;
    for (const Gpu& gpu : node.gpus) count += gpu_model_matches(model, gpu.model) ? 1 : 0;
  }
  return count;
}

}  // namespace

Result<Rows> apply(const State& state, const SetQuota& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_scope(state, c.tenant_id, c.project_id); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = check_model("gpu_model", c.gpu_model, false); !ok)
    return std::unexpected(ok.error());
  if (c.gpu_milli < 0 || c.gpu_milli > int64_t{1000} * 1'000'000) {
    return fail(ErrorCode::kInvalidArgument, "the limit must be 0 to 1,000,000 GPUs");
  }
  size_t live = 0;
  for (const auto& [id, q] : state.quotas) {
    if (!q.live() || q.tenant_id != c.tenant_id) continue;
    if (q.project_id == c.project_id && q.gpu_model == c.gpu_model) {
      Quota changed = q;  // One quota per (tenant, project, model): this replaces its limit.
      changed.gpu_milli = c.gpu_milli;
      return Rows{changed};
    }
    ++live;
  }
  if (live >= limits::kMaxQuotasPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most quotas it may");
  }
  if (auto ok = check_id("id", c.id, "quo"); !ok) return std::unexpected(ok.error());
  if (state.quota(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "quota id taken");
  return Rows{Quota{.id = c.id,
                    .tenant_id = c.tenant_id,
                    .project_id = c.project_id,
                    .gpu_model = c.gpu_model,
                    .gpu_milli = c.gpu_milli,
                    .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const DeleteQuota& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return delete_row(state.quota(c.id), "quota", c.id, now_ms);
}

Result<Rows> apply(const State& state, const CreateReservation& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("id", c.id, "rsv"); !ok) return std::unexpected(ok.error());
  if (state.tenant(c.tenant_id) == nullptr) {
    return std::unexpected(not_found("tenant", c.tenant_id));
  }
  if (auto ok = check_model("gpu_model", c.gpu_model, true); !ok)
    return std::unexpected(ok.error());
  if (c.gpus < 1 || c.gpus > 1'000'000) {
    return fail(ErrorCode::kInvalidArgument, "gpus must be 1 to 1,000,000");
  }
  if (c.ends_at_ms <= c.starts_at_ms) {
    return fail(ErrorCode::kInvalidArgument, "a reservation must end after it starts");
  }
  if (c.ends_at_ms <= now_ms) return fail(ErrorCode::kInvalidArgument, "that window is over");
  if (state.reservation(c.id) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "reservation id taken");
  }
  // The window's GPUs must exist: every reservation overlapping it counts (a bound, not a
  // sweep over the window, so it errs towards refusing).
  int64_t overlapping = 0;
  size_t held = 0;
  for (const auto& [id, r] : state.reservations) {
    if (r.cancelled_at_ms != 0 || r.ends_at_ms <= now_ms) continue;
    held += r.tenant_id == c.tenant_id ? 1 : 0;
    const bool overlaps = r.starts_at_ms < c.ends_at_ms && c.starts_at_ms < r.ends_at_ms;
    const bool same_gpus =
        gpu_model_matches(r.gpu_model, c.gpu_model) || gpu_model_matches(c.gpu_model, r.gpu_model);
    if (overlaps && same_gpus) overlapping += r.gpus;
  }
  if (held >= limits::kMaxReservationsPerTenant) {
    return fail(ErrorCode::kLimitExceeded, "the tenant holds the most reservations it may");
  }
  const int64_t total = gpus_of_model(state, c.gpu_model);
  if (overlapping + c.gpus > total) {
    return fail(ErrorCode::kConflict,
                fmt::format("the cluster has {} GPUs of {} and {} are already reserved in that "
                            "window; {} more do not fit",
                            total, c.gpu_model, overlapping, c.gpus));
  }
  return Rows{Reservation{.id = c.id,
                          .tenant_id = c.tenant_id,
                          .gpu_model = c.gpu_model,
                          .gpus = c.gpus,
                          .starts_at_ms = c.starts_at_ms,
                          .ends_at_ms = c.ends_at_ms,
                          .created_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const CancelReservation& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  return set_once(state.reservation(c.id), &Reservation::cancelled_at_ms, "reservation", c.id,
                  now_ms);
}

Result<Rows> apply(const State& state, const SetTenantWeight& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  if (c.weight < 1 || c.weight > limits::kMaxTenantWeight) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("weight must be 1 to {}", limits::kMaxTenantWeight));
  }
  Tenant changed = *tenant;
  changed.weight = c.weight;
  return Rows{changed};
}

Result<Rows> apply(const State& state, const SetTenantExec& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  const Tenant* tenant = state.tenant(c.tenant_id);
  if (tenant == nullptr) return std::unexpected(not_found("tenant", c.tenant_id));
  Tenant changed = *tenant;
  changed.exec_allowed = c.allowed;
  return Rows{changed};
}

void put(State& state, const Quota& quota) { state.quotas[quota.id] = quota; }

void put(State& state, const Reservation& reservation) {
  state.reservations[reservation.id] = reservation;
}

}  // namespace allot
