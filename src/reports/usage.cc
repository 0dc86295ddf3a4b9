#include "reports/usage.h"

#include <algorithm>
#include <map>

#include "core/money/metering.h"
#include "core/money/storage.h"
#include "reports/invoice_draft.h"

namespace allot::billing {
namespace {

constexpr int64_t kDaySeconds = 86'400;

Error overflow() { return Error{ErrorCode::kOverflow, "a usage sum leaves the range of amounts"}; }

// "2026-12-01" for the UTC day starting at day_s.
std::string day_name(int64_t day_s) { return format_time(day_s * 1000).substr(0, 10); }

std::string group_key(const Instance& instance, const Usage& usage, const UsageQuery& query) {
  switch (query.group_by) {
    case GroupBy::kTenant:
      return instance.tenant_id;
    case GroupBy::kProject:
      return instance.project_id;
    case GroupBy::kLabel: {
      auto it = instance.spec.labels.find(query.label_key);
      return it == instance.spec.labels.end() ? std::string{} : it->second;
    }
    case GroupBy::kGpuModel:
      return usage.key.model;
    case GroupBy::kDay:
      break;
  }
  return {};
}

Status add_to(UsageGroup& group, int64_t milli_seconds, int64_t spend_micros,
              const EnergyUse& energy) {
  if (__builtin_add_overflow(group.gpu_milli_seconds, milli_seconds, &group.gpu_milli_seconds) ||
      __builtin_add_overflow(group.spend_micros, spend_micros, &group.spend_micros) ||
      __builtin_add_overflow(group.energy_mj, energy.energy_mj, &group.energy_mj) ||
      __builtin_add_overflow(group.carbon_ug, energy.carbon_ug, &group.carbon_ug)) {
    return std::unexpected(overflow());
  }
  return {};
}

// Adds one instance's share of [from_s, to_s) to the group named `key`, with the energy of the
// days that start in [energy_from_s, energy_to_s).
Status add_window(const State& state, const Instance& instance, const Usage& usage, int64_t from_s,
                  int64_t to_s, const std::string& key, std::map<std::string, UsageGroup>& groups,
                  int64_t energy_from_s, int64_t energy_to_s) {
  auto milli_seconds = milli_seconds_within(usage.milli, usage.start_s, usage.end_s, from_s, to_s);
  if (!milli_seconds) return std::unexpected(milli_seconds.error());
  if (*milli_seconds == 0) return {};
  auto spend = charge_between(state, usage, from_s, to_s);
  if (!spend) return std::unexpected(spend.error());
  UsageGroup& group = groups[key];
  group.key = key;
  return add_to(group, *milli_seconds, *spend,
                instance.energy_between(energy_from_s * 1000, energy_to_s * 1000));
}

// Days are cut at UTC midnights, each charged by charge_between, so the days add up to the window.
Status add_days(const State& state, const Instance& instance, const Usage& usage,
                const UsageQuery& query, std::map<std::string, UsageGroup>& groups) {
  const int64_t first_s = std::max(usage.start_s, query.from_s);
  const int64_t last_s = std::min(usage.end_s, query.to_s);
  for (int64_t day_s = first_s - first_s % kDaySeconds; day_s < last_s; day_s += kDaySeconds) {
    const int64_t from_s = std::max(day_s, query.from_s);
    const int64_t to_s = std::min(day_s + kDaySeconds, query.to_s);
    if (auto ok = add_window(state, instance, usage, from_s, to_s, day_name(day_s), groups, day_s,
                             day_s + kDaySeconds);
        !ok) {
      return ok;
    }
  }
  return {};
}

// What one volume's storage adds to the group named `key` within [from_s, to_s).
Status add_storage_window(const State& state, const StorageUse& use, int64_t from_s, int64_t to_s,
                          const std::string& key, std::map<std::string, UsageGroup>& groups) {
  auto gb_seconds = gb_seconds_within(use, from_s, to_s);
  if (!gb_seconds) return std::unexpected(gb_seconds.error());
  if (*gb_seconds == 0) return {};
  auto spend = storage_between(state, use, from_s, to_s);
  if (!spend) return std::unexpected(spend.error());
  UsageGroup& group = groups[key];
  group.key = key;
  if (__builtin_add_overflow(group.gb_seconds, *gb_seconds, &group.gb_seconds) ||
      __builtin_add_overflow(group.spend_micros, *spend, &group.spend_micros)) {
    return std::unexpected(overflow());
  }
  return {};
}

Status add_storage(const State& state, const Volume& volume, const UsageQuery& query, TimeMs now_ms,
                   std::map<std::string, UsageGroup>& groups) {
  const StorageUse use = storage_use(volume, now_ms);
  if (query.group_by != GroupBy::kDay) {
    std::string key;  // A volume has no labels: it groups under "" by label.
    if (query.group_by == GroupBy::kTenant) key = volume.tenant_id;
    if (query.group_by == GroupBy::kProject) key = volume.project_id;
    if (query.group_by == GroupBy::kGpuModel) key = use.key.model;
    return add_storage_window(state, use, query.from_s, query.to_s, key, groups);
  }
  const int64_t first_s = std::max(use.start_s, query.from_s);
  const int64_t last_s = std::min(use.end_s, query.to_s);
  for (int64_t day_s = first_s - first_s % kDaySeconds; day_s < last_s; day_s += kDaySeconds) {
    if (auto ok =
            add_storage_window(state, use, std::max(day_s, query.from_s),
                               std::min(day_s + kDaySeconds, query.to_s), day_name(day_s), groups);
        !ok) {
      return ok;
    }
  }
  return {};
}

// Calls to other tenants' shared services, as invoices charge them: by the hours that start in
// the window, under the caller's tenant, or under "services" by project, label or GPU model (they
// are no project's, label's or model's).
Status add_service_calls(const State& state, const UsageQuery& query,
                         std::map<std::string, UsageGroup>& groups) {
  for (const auto& [id, u] : state.service_usage) {
    if (query.tenant_id && u.caller_tenant_id != *query.tenant_id) continue;
    if (u.hour_ms < query.from_s * 1000 || u.hour_ms >= query.to_s * 1000) continue;
    if (u.charged_micros == 0) continue;
    std::string key = "services";
    if (query.group_by == GroupBy::kTenant) key = u.caller_tenant_id;
    if (query.group_by == GroupBy::kDay) key = day_name(u.hour_ms / 1000);
    UsageGroup& group = groups[key];
    group.key = key;
    if (auto ok = add_to(group, 0, u.charged_micros, EnergyUse{}); !ok) return ok;
  }
  return {};
}

// The volumes' storage in the forecast: what it cost from the month's start to now and, for live
// volumes at the prices now, per hour and to the month's end.
Status add_storage_forecast(const State& state, const std::optional<std::string>& tenant_id,
                            TimeMs now_ms, Forecast& out, int64_t& to_come) {
  const int64_t now_s = now_ms / 1000;
  const int64_t end_s = next_month_start(now_ms) / 1000;
  for (const auto& [id, volume] : state.volumes) {
    if (tenant_id && volume.tenant_id != *tenant_id) continue;
    auto spent = storage_between(state, storage_use(volume, now_ms), out.month_ms / 1000, now_s);
    if (!spent) return std::unexpected(spent.error());
    if (__builtin_add_overflow(out.spent_micros, *spent, &out.spent_micros)) {
      return std::unexpected(overflow());
    }
    if (volume.deleted_at_ms != 0) continue;
    const meter::Price* price = state.prices.at(meter::storage_key(volume.region), now_ms);
    if (price == nullptr) continue;
    auto hour = meter::storage_charge({meter::Stretch{0, 3'600, price}}, volume.size_gb);
    auto rest = meter::storage_charge({meter::Stretch{now_s, end_s, price}}, volume.size_gb);
    if (!hour || !rest) return std::unexpected(hour ? rest.error() : hour.error());
    if (__builtin_add_overflow(out.burn_micros_per_hour, *hour, &out.burn_micros_per_hour) ||
        __builtin_add_overflow(to_come, *rest, &to_come)) {
      return std::unexpected(overflow());
    }
  }
  return {};
}

}  // namespace

Result<std::vector<UsageGroup>> usage_report(const State& state, const UsageQuery& query,
                                             TimeMs now_ms) {
  if (query.to_s <= query.from_s) {
    return fail(ErrorCode::kInvalidArgument, "the window must end after it starts");
  }
  if (query.group_by == GroupBy::kDay && query.to_s - query.from_s > kMaxReportDays * kDaySeconds) {
    return fail(ErrorCode::kInvalidArgument, "a report by day covers at most 366 days");
  }
  std::map<std::string, UsageGroup> groups;
  for (const auto& [id, instance] : state.instances) {
    if (query.tenant_id && instance.tenant_id != *query.tenant_id) continue;
    auto usage = usage_of(state, instance, now_ms);
    if (!usage) continue;
    Status added =
        query.group_by == GroupBy::kDay
            ? add_days(state, instance, *usage, query, groups)
            : add_window(state, instance, *usage, query.from_s, query.to_s,
                         group_key(instance, *usage, query), groups, query.from_s, query.to_s);
    if (!added) return std::unexpected(added.error());
  }
  for (const auto& [id, volume] : state.volumes) {
    if (query.tenant_id && volume.tenant_id != *query.tenant_id) continue;
    if (auto ok = add_storage(state, volume, query, now_ms, groups); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (auto ok = add_service_calls(state, query, groups); !ok) return std::unexpected(ok.error());
  std::vector<UsageGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  return out;
}

Result<Forecast> month_forecast(const State& state, const std::optional<std::string>& tenant_id,
                                TimeMs now_ms) {
  Forecast out{.month_ms = month_start(now_ms)};
  const int64_t from_s = out.month_ms / 1000;
  const int64_t now_s = now_ms / 1000;
  const int64_t end_s = next_month_start(now_ms) / 1000;
  int64_t to_come = 0;
  for (const auto& [id, instance] : state.instances) {
    if (tenant_id && instance.tenant_id != *tenant_id) continue;
    auto usage = usage_of(state, instance, now_ms);
    if (!usage) continue;
    auto spent = charge_between(state, *usage, from_s, now_s);
    if (!spent) return std::unexpected(spent.error());
    if (__builtin_add_overflow(out.spent_micros, *spent, &out.spent_micros)) {
      return std::unexpected(overflow());
    }
    if (instance.state != InstanceState::kRunning) continue;
    const meter::Price* price = state.prices.charged(usage->key, now_ms);
    if (price == nullptr) continue;
    // The charge rule itself, over an hour and over the rest of the month at today's price.
    auto hour = meter::stretches_charge({meter::Stretch{0, 3'600, price}}, usage->milli,
                                        usage->cpu_milli, usage->memory_mib);
    auto rest = meter::stretches_charge({meter::Stretch{now_s, end_s, price}}, usage->milli,
                                        usage->cpu_milli, usage->memory_mib);
    if (!hour || !rest) return std::unexpected(hour ? rest.error() : hour.error());
    if (__builtin_add_overflow(out.burn_micros_per_hour, *hour, &out.burn_micros_per_hour) ||
        __builtin_add_overflow(to_come, *rest, &to_come)) {
      return std::unexpected(overflow());
    }
  }
  if (auto ok = add_storage_forecast(state, tenant_id, now_ms, out, to_come); !ok) {
    return std::unexpected(ok.error());
  }
  // Calls to shared services so far this month (what is to come of them is not forecast).
  for (const auto& [id, u] : state.service_usage) {
    if ((tenant_id && u.caller_tenant_id != *tenant_id) || u.hour_ms < out.month_ms) continue;
    if (__builtin_add_overflow(out.spent_micros, u.charged_micros, &out.spent_micros)) {
      return std::unexpected(overflow());
    }
  }
  if (__builtin_add_overflow(out.spent_micros, to_come, &out.forecast_micros)) {
    return std::unexpected(overflow());
  }
  return out;
}

}  // namespace allot::billing
