// One allotd among replicas on one PostgreSQL (--advertise-url). A replica follows until it takes
// the leader's lease (store/lease.h), then leads: it alone loads the state, applies commands and
// runs timers, renewing the lease well inside its duration. A follower answers /readyz with 503
// and where the leader is (every replica lists the live ones there, and lets pages from their
// origins call it), /metrics with its role, and every other request with 307 to the
// leader (503 not_leader while there is none). A leader that loses its lease never goes back to
// following in place: its memory may hold what it could not commit, so it starts afresh.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "common/clock.h"
#include "store/lease.h"

namespace allot {

class Replica {
 public:
  // `cluster_id` names the database's cluster (made by its first replica), shown by /readyz and
  // /metrics so that a replica pointed at another database stands out.
  Replica(std::unique_ptr<Lease> lease, std::string cluster_id);

  // Follows, announcing itself and watching the lease, until it takes the lease (true) or
  // `stopping` is set (false). kAlreadyExists when another live replica advertises its URL.
  [[nodiscard]] Result<bool> wait_to_lead(const std::atomic<bool>& stopping);
  // Renews the lease until `stopping` is set (true; the lease is still held, for what is in
  // flight: release() it after), or until it is lost to another replica or a hand (false).
  bool keep_leading(const std::atomic<bool>& stopping);
  // Gives the lease up now, if held: for a leader that cannot start after all.
  void release();

  int64_t epoch() const;
  const std::string& holder() const { return holder_; }
  // Leads, and by the local monotonic clock its lease cannot have expired yet.
  bool serving() const;

  // The time this replica keeps: its host's clock moved to the database's, as measured at each
  // reading of the lease, so that a leader stamps and bills by the same time as the one before.
  const Clock& clock() const { return clock_; }

  // Whether a page from `origin` may call this replica: the origin of a URL that a replica of
  // this database has advertised (api/cors.h), so that the dashboard follows the leader.
  bool allows_origin(std::string_view origin) const;

  // What this replica answers to a request while it does not serve it.
  HttpResponse answer_elsewhere(const HttpRequest& request) const;
  // /readyz: 200 on the leader when `ready` (its store works), 503 otherwise; both with the role.
  HttpResponse readiness(bool ready) const;
  // The replica's gauges in Prometheus's text format.
  std::string metrics_text() const;

 private:
  // Records what a reading of the lease shows.
  void saw(const LeaseRow& row);
  // Reads the lease, setting clock_ by the database's time in the row.
  Result<LeaseRow> read_lease();
  // Reads which replicas have announced themselves.
  void read_replicas();

  using SteadyTime = std::chrono::steady_clock::time_point;

  std::unique_ptr<Lease> lease_;  // The lease thread's only.
  const std::string holder_;
  const std::string cluster_id_;
  const std::chrono::milliseconds duration_;
  OffsetClock clock_;
  mutable std::mutex mutex_;
  bool leading_ = false;      // Guarded by mutex_.
  int64_t epoch_ = 0;         // Guarded by mutex_: the lease's epoch, ours when leading.
  std::string leader_url_;    // Guarded by mutex_: empty while no one holds the lease.
  int64_t lease_age_ms_ = 0;  // Guarded by mutex_: since the lease was last taken or renewed.
  SteadyTime age_at_;         // Guarded by mutex_: when lease_age_ms_ was read.
  SteadyTime valid_until_;    // Guarded by mutex_: leading, the lease is surely ours until then.
  // Guarded by mutex_: the origins of every URL a replica advertised, and the URLs of those seen
  // within three lease durations, which /readyz lists.
  std::set<std::string, std::less<>> origins_;
  std::vector<std::string> live_urls_;
};

}  // namespace allot
