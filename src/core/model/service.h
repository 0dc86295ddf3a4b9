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
  // The revision of that number; null when it was dropped or never was.
  const ServiceRevision* revision_of(int number) const {
    for (const ServiceRevision& r : revisions) {
      if (r.number == number) return &r;
    }
    return nullptr;
  }
};

// A key a tenant gives a caller of one of its services (its own customer): it reaches that
// service's endpoint, and nothing else of Allot.
struct ServiceKey {
  std::string id;  // "svk_" + 16 hex
  std::string tenant_id;
  std::string service_id;
  std::string name;        // The caller's, as the tenant names it.
  std::string prefix;      // The key's first characters, to tell keys apart in lists.
  std::string token_hash;  // SHA-256 of the whole key; the key itself is never stored.
  TimeMs created_at_ms = 0;
  TimeMs revoked_at_ms = 0;  // 0 while live.

  bool operator==(const ServiceKey&) const = default;
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
