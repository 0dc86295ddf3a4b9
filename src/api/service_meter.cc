#include "api/service_meter.h"

namespace allot {

void ServiceMeter::count(const ServiceUseCount& use) {
  const std::lock_guard lock(mutex_);
  ServiceUseCount& into = counts_[{use.service_id, use.caller_tenant_id}];
  into.service_id = use.service_id;
  into.caller_tenant_id = use.caller_tenant_id;
  into.requests += use.requests;
  into.tokens += use.tokens;
  into.malformed += use.malformed;
  into.failed += use.failed;
}

std::vector<ServiceUseCount> ServiceMeter::take() {
  std::vector<ServiceUseCount> out;
  const std::lock_guard lock(mutex_);
  out.reserve(counts_.size());
  for (auto& [key, use] : counts_) out.push_back(std::move(use));
  counts_.clear();
  return out;
}

void ServiceMeter::give_back(const std::vector<ServiceUseCount>& counts) {
  for (const ServiceUseCount& use : counts) count(use);
}

void ServiceMeter::set_spendable(const std::map<std::string, int64_t>& by_tenant) {
  const std::lock_guard lock(mutex_);
  for (const auto& [tenant, micros] : by_tenant) spendable_[tenant] = micros;
}

bool ServiceMeter::may_spend(const std::string& caller_tenant_id) const {
  const std::lock_guard lock(mutex_);
  auto it = spendable_.find(caller_tenant_id);
  return it == spendable_.end() || it->second > 0;
}

}  // namespace allot
