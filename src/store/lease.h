// The leader's lease, for replicas of allotd on one PostgreSQL database. One row holds who leads
// (holder, the URL clients reach it at), its epoch and when the lease expires; every time in it is
// read off the database's clock, so replicas whose own clocks disagree still agree on it. A
// replica takes the lease only when it has expired, raising the epoch; the leader renews it well
// inside its duration, and fences each write with it (Fence, in store.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "store/db.h"
#include "store/store.h"

namespace allot {

// The database's clock in milliseconds since the epoch, as an SQL expression (PostgreSQL).
inline constexpr std::string_view kDbNowMs =
    "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

// The lease row as read, with the database's time at the reading.
struct LeaseRow {
  std::string holder;  // Empty: no one has led yet, or the last leader gave it up.
  std::string url;
  int64_t epoch = 0;
  int64_t expires_ms = 0;
  int64_t now_ms = 0;

  bool held() const { return !holder.empty() && expires_ms > now_ms; }
};

// A replica as it last announced itself.
struct ReplicaRow {
  std::string url;
  std::string holder;
  int64_t seen_ms = 0;
  int64_t age_ms = 0;  // Since it last announced itself, by the database's clock.
};

// Checks, inside the caller's open transaction, that `fence` still holds the lease; kNotLeader if
// not. The row is locked FOR SHARE, so a takeover's update waits for this transaction to end.
[[nodiscard]] Status check_fence(Db& db, const Fence& fence);

class Lease {
 public:
  // Opens its own connection to the database, apart from the store's, so that renewing the lease
  // never waits behind a commit. `holder` names this process; `url` is where clients reach it.
  [[nodiscard]] static Result<std::unique_ptr<Lease>> open(const std::string& postgres_url,
                                                           std::string holder, std::string url,
                                                           int64_t duration_ms);
  Lease(std::unique_ptr<Db> db, std::string holder, std::string url, int64_t duration_ms);

  [[nodiscard]] Result<LeaseRow> read();
  // Takes the lease when no one holds it, it has expired, or it expires further ahead than any
  // renewal could have set (a row edited by hand): the new epoch, or nullopt when another
  // replica holds it.
  [[nodiscard]] Result<std::optional<int64_t>> try_acquire();
  // Extends the lease held at `epoch` by its duration from now: false once it is not ours.
  [[nodiscard]] Result<bool> renew(int64_t epoch);
  // Gives the lease held at `epoch` up at once (a graceful stop): a follower need not wait.
  [[nodiscard]] Status release(int64_t epoch);
  // Records this replica as alive. kAlreadyExists when another process advertising the same
  // URL was seen within the lease's duration: clients could not tell the two apart.
  [[nodiscard]] Status announce();
  // Every replica that has announced itself, gone ones too, by URL.
  [[nodiscard]] Result<std::vector<ReplicaRow>> replicas();
  // A setting every replica must share: the stored value of `name`, which is set to `value` if
  // it has none yet.
  [[nodiscard]] Result<std::string> shared_setting(const std::string& name,
                                                   const std::string& value);

  const std::string& holder() const { return holder_; }
  const std::string& url() const { return url_; }
  int64_t duration_ms() const { return duration_ms_; }

 private:
  std::unique_ptr<Db> db_;
  std::string holder_;
  std::string url_;
  int64_t duration_ms_;
};

}  // namespace allot
