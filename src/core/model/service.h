// Services: a tenant's long-running endpoint (a model server, an API) that allotd serves at
// /s/SERVICE/ and balances over replicas. A replica is an instance like any other (the same
// scheduler, quotas, isolation and billing), started by allotd's service controller from the
// service's current revision; the controller rolls replicas over to a new revision, replaces
// those that end, and scales their number with the traffic the proxy measures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "core/model/cluster.h"

namespace allot {

// What every replica of one revision runs: an instance spec, the port it serves on, and the
// path that says it is ready.
struct ServiceRevision {
  int number = 0;  // 1, 2, ...
  InstanceSpec spec;
  int port = 0;
  std::string readiness = "/";  // A GET here answering 2xx or 3xx: the replica is ready.
  TimeMs created_at_ms = 0;

  bool operator==(const ServiceRevision&) const = default;
};

inline constexpr std::string_view kRolloutRolling = "rolling";
inline constexpr std::string_view kRolloutDone = "done";
inline constexpr std::string_view kRolloutFailed = "failed";

struct HostedService {
  std::string id;  // "svc_" + 16 hex
  std::string tenant_id;
  std::string project_id;
  std::string user_id;  // Who made it: its replicas are launched as them.
  std::string name;     // Unique among the tenant's live services.
  // The OpenAI-style model name requests to /v1/chat/completions route here by; empty: none.
  std::string model;
  int min_replicas = 1;  // While it has traffic (or always, without scale to zero).
  int max_replicas = 1;
  // What one replica is meant to carry: requests per second, or requests in flight at once; the
  // autoscaler keeps the replicas near it. 0 and 0: the replica count stays at min_replicas.
  int target_rps = 0;
  int target_concurrency = 0;
  int64_t scale_to_zero_after_ms = 0;  // With no request for this long, no replicas; 0: never.
  int64_t ready_timeout_ms = 300'000;  // A new replica not ready by then stops the rollout.
  // Spot replicas that cannot be placed (or were preempted) are replaced on on-demand capacity.
  bool spot_fallback = false;
  // Other tenants may call it with caller keys of their own, paying its prices per use.
  bool shared = false;
  // What a caller of another tenant pays per answered request and per 1,000 tokens (micros).
  int64_t price_per_request_micros = 0;
  int64_t price_per_1k_tokens_micros = 0;
  // A rise announced to the callers: these prices from `prices_rise_at_ms` on (0: none).
  int64_t rising_price_per_request_micros = 0;
  int64_t rising_price_per_1k_tokens_micros = 0;
  TimeMs prices_rise_at_ms = 0;
  std::vector<ServiceRevision> revisions;  // The newest last; the oldest ones dropped.
  int revision = 0;                        // The one replicas are rolled over to.
  int serving_revision = 0;                // The last one whose rollout finished; 0: none yet.
  std::string rollout = std::string(kRolloutRolling);
  std::string rollout_reason;
  // The replicas the autoscaler wants now, within [min_replicas, max_replicas], or 0 at zero.
  int desired = 1;
  std::string scale_reason;
  TimeMs scaled_at_ms = 0;
  int64_t restarts = 0;  // Replicas that ended on their own and were replaced.
  TimeMs created_at_ms = 0;
  TimeMs updated_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0: live.

  bool operator==(const HostedService&) const = default;
  bool deleted() const { return deleted_at_ms != 0; }
  // The prices callers pay at `at_ms`: an announced rise once its time has come.
  std::pair<int64_t, int64_t> prices_at(TimeMs at_ms) const {
    if (prices_rise_at_ms != 0 && at_ms >= prices_rise_at_ms) {
      return {rising_price_per_request_micros, rising_price_per_1k_tokens_micros};
    }
    return {price_per_request_micros, price_per_1k_tokens_micros};
  }
  // Whether a rise is announced and not yet in force at `at_ms`.
  bool rise_pending(TimeMs at_ms) const {
    return prices_rise_at_ms != 0 && at_ms < prices_rise_at_ms;
  }
  // The revision of that number; null when it was dropped or never was.
  const ServiceRevision* revision_of(int number) const {
    for (const ServiceRevision& r : revisions) {
      if (r.number == number) return &r;
    }
    return nullptr;
  }
};

// A key that reaches one service's endpoint and nothing else of Allot: one the service's tenant
// gives its own customers, or one another tenant makes to call a shared service, whose use is
// then billed to that tenant at the service's prices.
struct ServiceKey {
  std::string id;         // "svk_" + 16 hex
  std::string tenant_id;  // The service's.
  std::string service_id;
  std::string caller_tenant_id;  // Who holds it and pays for its use; the service's tenant: free.
  std::string name;              // The caller's, as the tenant names it.
  std::string prefix;            // The key's first characters, to tell keys apart in lists.
  std::string token_hash;        // SHA-256 of the whole key; the key itself is never stored.
  TimeMs created_at_ms = 0;
  TimeMs revoked_at_ms = 0;  // 0 while live.

  bool operator==(const ServiceKey&) const = default;
  // Its use is billed at the service's prices: it is another tenant's.
  bool billed() const { return !caller_tenant_id.empty() && caller_tenant_id != tenant_id; }
};

// One caller's use of one service in one UTC hour at one pair of prices: what the proxy counted,
// what it cost and what of that the caller's balance paid (the rest is owed, as invoiced).
struct ServiceUsage {
  std::string id;  // service/caller/hour/price per request/price per 1k tokens
  std::string service_id;
  std::string tenant_id;  // The service's: it earns what is paid.
  std::string caller_tenant_id;
  TimeMs hour_ms = 0;
  int64_t price_per_request_micros = 0;
  int64_t price_per_1k_tokens_micros = 0;
  int64_t requests = 0;   // Answered with a 2xx.
  int64_t tokens = 0;     // From the answers' usage, or their X-Allot-Tokens header.
  int64_t malformed = 0;  // Answers whose usage could not be read: neither counted nor billed.
  int64_t failed = 0;     // Answers that were not 2xx: not billed.
  int64_t charged_micros = 0;
  int64_t paid_micros = 0;
  int64_t postings = 0;
  TimeMs updated_at_ms = 0;

  bool operator==(const ServiceUsage&) const = default;
  // requests x price + tokens x price / 1000, rounded down; nullopt past the range of amounts.
  std::optional<int64_t> charge() const {
    // tokens = 1000 q + r: q x price + r x price / 1000 is the floor, in int64 throughout.
    const int64_t thousands = tokens / 1000;
    const int64_t rest = tokens % 1000;
    int64_t per_requests = 0;
    int64_t per_thousands = 0;
    int64_t per_rest = 0;
    int64_t total = 0;
    if (__builtin_mul_overflow(requests, price_per_request_micros, &per_requests) ||
        __builtin_mul_overflow(thousands, price_per_1k_tokens_micros, &per_thousands) ||
        __builtin_mul_overflow(rest, price_per_1k_tokens_micros, &per_rest) ||
        __builtin_add_overflow(per_requests, per_thousands, &total) ||
        __builtin_add_overflow(total, per_rest / 1000, &total)) {
      return std::nullopt;
    }
    return total;
  }
};

// What the proxy counted of one caller's use of one service since it last said.
struct ServiceUseCount {
  std::string service_id;
  std::string caller_tenant_id;
  int64_t requests = 0;
  int64_t tokens = 0;
  int64_t malformed = 0;
  int64_t failed = 0;

  bool operator==(const ServiceUseCount&) const = default;
};

// The text every service key starts with, which API keys never do.
inline constexpr std::string_view kServiceKeyStart = "allot_svc_";

// Makes a service: the command carries its settings and its first revision (revisions[0]); the
// core numbers the revision and stamps the times.
struct CreateService {
  HostedService service;
};

// Changes what is set. A new revision (spec, port or readiness) starts a rollout.
struct UpdateService {
  std::string id;
  std::optional<ServiceRevision> revision;
  std::optional<int> min_replicas;
  std::optional<int> max_replicas;
  std::optional<int> target_rps;
  std::optional<int> target_concurrency;
  std::optional<int64_t> scale_to_zero_after_ms;
  std::optional<int64_t> ready_timeout_ms;
  std::optional<std::string> model;
  std::optional<bool> shared;
  std::optional<int64_t> price_per_request_micros;
  std::optional<int64_t> price_per_1k_tokens_micros;
};

// Marks it deleted; the controller stops its replicas.
struct DeleteService {
  std::string id;
};

// The autoscaler's decision: how many replicas, and why.
struct ScaleService {
  std::string id;
  int desired = 0;
  std::string reason;
};

// Adds the counts to this hour's usage and posts what they cost from each caller's own account
// to the service's tenant's earnings, as far as the caller's money goes.
struct RecordServiceUse {
  std::vector<ServiceUseCount> counts;
};

struct CreateServiceKey {
  ServiceKey key;
};

struct RevokeServiceKey {
  std::string id;
};

// The controller's account of a rollout (a revision's replicas all ready, or one that never got
// ready), and of replicas it replaced.
struct RecordServiceRollout {
  std::string id;
  int revision = 0;
  std::string rollout;  // kRolloutRolling, kRolloutDone or kRolloutFailed.
  std::string reason;
  int64_t restarts = 0;  // Added to the count.
};

}  // namespace allot
