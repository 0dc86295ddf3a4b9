#include "api/service_meter.h"

#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

namespace allot {
namespace {

int64_t saturated_add(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<int64_t>::max() : out;
}

int64_t saturated_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<int64_t>::max() : out;
}

// The completion's own bound, when the body gives one as a whole number.
int64_t completion_bound(std::string_view body) {
  const nlohmann::json asked = nlohmann::json::parse(body, nullptr, false);
  if (!asked.is_object()) return kDefaultCompletionBound;
  for (const char* field : {"max_completion_tokens", "max_tokens"}) {
    const auto it = asked.find(field);
    if (it != asked.end() && it->is_number_unsigned()) {
      return static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT32_MAX));
    }
  }
  return kDefaultCompletionBound;
}

int64_t value_or_zero(const std::map<std::string, int64_t>& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

}  // namespace

int64_t call_bound_micros(int64_t per_request_micros, int64_t per_1k_tokens_micros,
                          std::string_view body) {
  if (per_1k_tokens_micros == 0) return per_request_micros;
  const int64_t tokens = saturated_add(static_cast<int64_t>(body.size()), completion_bound(body));
  // Rounded up, so that the bound is never under the charge.
  const int64_t per_tokens = saturated_add(saturated_mul(tokens, per_1k_tokens_micros), 999) / 1000;
  return saturated_add(per_request_micros, per_tokens);
}

void ServiceMeter::count(const ServiceUseCount& use, int64_t charge_micros) {
  const std::lock_guard lock(mutex_);
  ServiceUseCount& into = counts_[{use.service_id, use.caller_tenant_id}];
  into.service_id = use.service_id;
  into.caller_tenant_id = use.caller_tenant_id;
  into.requests += use.requests;
  into.tokens += use.tokens;
  into.malformed += use.malformed;
  into.failed += use.failed;
  int64_t& spent = unrecorded_[use.caller_tenant_id];
  spent = saturated_add(spent, charge_micros);
}

std::vector<ServiceUseCount> ServiceMeter::take() {
  std::vector<ServiceUseCount> out;
  const std::lock_guard lock(mutex_);
  out.reserve(counts_.size());
  for (auto& [key, use] : counts_) out.push_back(std::move(use));
  counts_.clear();
  for (const auto& [tenant, micros] : unrecorded_) {
    recording_[tenant] = saturated_add(recording_[tenant], micros);
  }
  unrecorded_.clear();
  return out;
}

void ServiceMeter::give_back(const std::vector<ServiceUseCount>& counts) {
  for (const ServiceUseCount& use : counts) count(use);
  const std::lock_guard lock(mutex_);
  for (const auto& [tenant, micros] : recording_) {
    unrecorded_[tenant] = saturated_add(unrecorded_[tenant], micros);
  }
  recording_.clear();
}

void ServiceMeter::set_spendable(const std::map<std::string, int64_t>& by_tenant) {
  const std::lock_guard lock(mutex_);
  for (const auto& [tenant, micros] : by_tenant) spendable_[tenant] = micros;
  // What was being recorded is in the money just read.
  recording_.clear();
}

bool ServiceMeter::hold(const std::string& caller_tenant_id, int64_t bound_micros) {
  const std::lock_guard lock(mutex_);
  const int64_t committed =
      saturated_add(saturated_add(value_or_zero(unrecorded_, caller_tenant_id),
                                  value_or_zero(recording_, caller_tenant_id)),
                    value_or_zero(held_, caller_tenant_id));
  const auto known = spendable_.find(caller_tenant_id);
  const bool admitted = known == spendable_.end() ? committed == 0 : known->second > committed;
  if (!admitted) return false;
  int64_t& held = held_[caller_tenant_id];
  held = saturated_add(held, bound_micros);
  return true;
}

void ServiceMeter::release(const std::string& caller_tenant_id, int64_t bound_micros) {
  const std::lock_guard lock(mutex_);
  const auto it = held_.find(caller_tenant_id);
  if (it == held_.end()) return;
  it->second -= bound_micros;
  if (it->second <= 0) held_.erase(it);
}

}  // namespace allot
