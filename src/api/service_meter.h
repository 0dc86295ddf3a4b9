// Callers' use of shared services as the proxy counts it (answered requests, tokens, answers
// whose usage could not be read, failures), until the service controller records it in the
// core (RecordServiceUse) about once a second; and what each caller may still spend, as the
// controller last read it, so that a caller whose money is gone is answered 402 at once.
// Safe from any thread; held in memory only: a crash loses at most the counts of one round.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/model/service.h"

namespace allot {

class ServiceMeter {
 public:
  // Adds one answer's use to the caller's count for the service.
  void count(const ServiceUseCount& use);
  // The counts since the last take, and no more of them here.
  std::vector<ServiceUseCount> take();
  // Puts counts that could not be recorded back, to go with the next take.
  void give_back(const std::vector<ServiceUseCount>& counts);

  // What each caller with a key to a priced service may spend now (micros); callers not named
  // keep what they had.
  void set_spendable(const std::map<std::string, int64_t>& by_tenant);
  // Whether the caller may make a priced call: its money is not known to be gone.
  bool may_spend(const std::string& caller_tenant_id) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, ServiceUseCount> counts_;
  std::map<std::string, int64_t> spendable_;
};

}  // namespace allot
