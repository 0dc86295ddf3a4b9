// Callers' use of shared services as the proxy counts it (answered requests, tokens, answers
// whose usage could not be read, failures), until the service controller records it in the
// core (RecordServiceUse) about once a second; and what each caller may still spend, so that no
// caller spends money it has not got, however many calls it makes at once.
//
// A priced call holds a bound on what it can cost before it is forwarded (hold), and is admitted
// only while the caller has something left: what it could spend when the controller last read
// it, less what calls answered since will cost, less what calls in flight hold. The last call
// admitted may cost more than was left, so at most one call's worth is ever owed.
// Safe from any thread; held in memory only: a crash loses at most the counts of one round.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/service.h"

namespace allot {

// What a call can cost at most: its price per request, and per token for a bound on its tokens
// (the prompt's bytes, each token being at least one, plus the completion's max_tokens or
// kDefaultCompletionBound). Saturates rather than overflows.
inline constexpr int64_t kDefaultCompletionBound = 4'096;
int64_t call_bound_micros(int64_t per_request_micros, int64_t per_1k_tokens_micros,
                          std::string_view body);

class ServiceMeter {
 public:
  // Adds one answer's use to the caller's count for the service, and what it costs (micros,
  // at the prices the proxy knows) to what the caller has spent since the last take.
  void count(const ServiceUseCount& use, int64_t charge_micros = 0);
  // The counts since the last take, and no more of them here.
  std::vector<ServiceUseCount> take();
  // Puts counts that could not be recorded back, to go with the next take.
  void give_back(const std::vector<ServiceUseCount>& counts);

  // What each caller with a key to a priced service may spend now (micros), as read from the
  // core after the last take was recorded; callers not named keep what they had.
  void set_spendable(const std::map<std::string, int64_t>& by_tenant);
  // Holds `bound_micros` of the caller's money for a call; false, holding nothing, when nothing
  // is left to it. A caller not known yet may hold for one call at a time.
  bool hold(const std::string& caller_tenant_id, int64_t bound_micros);
  // Gives back what a call held, once it has ended (and its use was counted).
  void release(const std::string& caller_tenant_id, int64_t bound_micros);

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, ServiceUseCount> counts_;
  std::map<std::string, int64_t> spendable_;
  std::map<std::string, int64_t> unrecorded_;  // Charged since the last take.
  std::map<std::string, int64_t> recording_;   // Charged in the last take, being recorded.
  std::map<std::string, int64_t> held_;        // Held by calls in flight.
};

}  // namespace allot
