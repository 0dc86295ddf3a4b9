#include "daemon/replica.h"

#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "api/cors.h"
#include "api/reply.h"

namespace allot {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// How often a follower looks at the lease: takeover comes at most this long after expiry.
milliseconds poll_interval(milliseconds duration) {
  return std::clamp(duration / 10, milliseconds(100), milliseconds(1'000));
}

// A host clock this far off the database's is worth a warning.
constexpr TimeMs kClockWarnMs = 1'000;

// Sleeps up to `wait`, waking early when `stopping` is set.
void nap(milliseconds wait, const std::atomic<bool>& stopping) {
  const auto until = steady_clock::now() + wait;
  while (!stopping && steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min(milliseconds(50), wait));
  }
}

}  // namespace

Replica::Replica(std::unique_ptr<Lease> lease, std::string cluster_id)
    : lease_(std::move(lease)),
      holder_(lease_->holder()),
      cluster_id_(std::move(cluster_id)),
      duration_(lease_->duration_ms()),
      age_at_(steady_clock::now()) {}

void Replica::saw(const LeaseRow& row) {
  std::lock_guard lock(mutex_);
  epoch_ = row.epoch;
  leader_url_ = row.held() ? row.url : std::string();
  lease_age_ms_ = row.held() ? row.now_ms - (row.expires_ms - duration_.count()) : 0;
  age_at_ = steady_clock::now();
}

Result<LeaseRow> Replica::read_lease() {
  const SystemClock host;
  const TimeMs before = host.now_ms();
  auto row = lease_->read();
  if (!row) return row;
  const TimeMs offset = row->now_ms - (before + host.now_ms()) / 2;
  const TimeMs was = clock_.offset_ms();
  clock_.set_offset_ms(offset);
  if (std::abs(offset) >= kClockWarnMs && std::abs(offset - was) >= kClockWarnMs) {
    spdlog::warn(
        "msg=\"this host's clock is {:.1f} s off the database's: allotd keeps the database's "
        "time\"",
        static_cast<double>(-offset) / 1000.0);
  }
  return row;
}

void Replica::read_replicas() {
  auto rows = lease_->replicas();
  if (!rows) return;
  std::set<std::string, std::less<>> origins;
  std::vector<std::string> live;
  for (const ReplicaRow& row : *rows) {
    if (std::string origin = url_origin(row.url); !origin.empty()) origins.insert(origin);
    if (row.age_ms < 3 * duration_.count()) live.push_back(row.url);
  }
  std::lock_guard lock(mutex_);
  origins_ = std::move(origins);
  live_urls_ = std::move(live);
}

bool Replica::allows_origin(std::string_view origin) const {
  std::lock_guard lock(mutex_);
  return origins_.contains(origin);
}

Result<bool> Replica::wait_to_lead(const std::atomic<bool>& stopping) {
  std::string last_leader = "?";
  while (!stopping) {
    if (auto ok = lease_->announce(); !ok) {
      if (ok.error().code == ErrorCode::kAlreadyExists) return std::unexpected(ok.error());
      spdlog::warn("msg=\"cannot reach the database\" error=\"{}\"", ok.error().message);
    }
    // Read first, so that the clock is the database's before this replica stamps anything.
    auto row = read_lease();
    read_replicas();
    if (row) {
      saw(*row);
      if (row->held() && row->url != last_leader) {
        spdlog::info("msg=\"following\" leader=\"{}\" epoch={}", row->url, row->epoch);
        last_leader = row->url;
      }
    }
    const auto asked = steady_clock::now();
    auto taken = lease_->try_acquire();
    if (taken && *taken) {
      std::lock_guard lock(mutex_);
      leading_ = true;
      epoch_ = **taken;
      leader_url_ = lease_->url();
      lease_age_ms_ = 0;
      age_at_ = asked;
      valid_until_ = asked + duration_;
      spdlog::info("msg=\"took the lease\" epoch={} holder={}", epoch_, holder_);
      return true;
    }
    nap(poll_interval(duration_), stopping);
  }
  return false;
}

bool Replica::keep_leading(const std::atomic<bool>& stopping) {
  while (!stopping) {
    nap(duration_ / 3, stopping);
    if (stopping) break;
    const auto asked = steady_clock::now();
    auto renewed = lease_->renew(epoch());
    if (!renewed) {
      // The database is away: the fence keeps anything from committing, and serving() turns
      // false once the lease may have run out.
      spdlog::warn("msg=\"cannot renew the lease\" error=\"{}\"", renewed.error().message);
      continue;
    }
    if (!*renewed) {
      spdlog::error("msg=\"lost the lease\" epoch={}", epoch());
      std::lock_guard lock(mutex_);
      leading_ = false;
      return false;
    }
    (void)lease_->announce();
    (void)read_lease();
    read_replicas();
    std::lock_guard lock(mutex_);
    valid_until_ = asked + duration_;
    lease_age_ms_ = 0;
    age_at_ = asked;
  }
  return true;
}

void Replica::release() {
  const int64_t held = epoch();
  {
    std::lock_guard lock(mutex_);
    if (!leading_) return;
    leading_ = false;
  }
  if (auto ok = lease_->release(held); !ok) {
    spdlog::warn("msg=\"cannot give the lease up\" error=\"{}\"", ok.error().message);
  }
}

int64_t Replica::epoch() const {
  std::lock_guard lock(mutex_);
  return epoch_;
}

bool Replica::serving() const {
  std::lock_guard lock(mutex_);
  return leading_ && steady_clock::now() < valid_until_;
}

HttpResponse Replica::answer_elsewhere(const HttpRequest& request) const {
  std::string leader;
  {
    std::lock_guard lock(mutex_);
    if (!leading_) leader = leader_url_;
  }
  if (leader.empty()) {
    return error_reply(
        Error{ErrorCode::kNotLeader, "no replica leads at the moment; retry in a few seconds"});
  }
  HttpResponse moved = error_reply(
      Error{ErrorCode::kNotLeader, fmt::format("this replica follows; the leader is {}", leader)});
  moved.status = 307;
  moved.location = leader + request.target;
  return moved;
}

HttpResponse Replica::readiness(bool ready) const {
  const bool leads = serving();
  std::lock_guard lock(mutex_);
  nlohmann::json body = {
      {"role", leads ? "leader" : "follower"},
      {"cluster", cluster_id_},
      {"epoch", epoch_},
      {"leader", leader_url_.empty() ? nlohmann::json() : nlohmann::json(leader_url_)},
      {"replicas", live_urls_}};
  if (leads && ready) {
    body["status"] = "ready";
    return json_reply(200, body);
  }
  body["status"] = leads ? "store unavailable" : "following";
  body["error"] = {{"code", code_name(leads ? ErrorCode::kUnavailable : ErrorCode::kNotLeader)},
                   {"message", leads ? "the store is unavailable" : "this replica follows"}};
  return json_reply(503, body);
}

std::string Replica::metrics_text() const {
  const bool leads = serving();
  std::lock_guard lock(mutex_);
  const auto since = std::chrono::duration<double>(steady_clock::now() - age_at_).count();
  return fmt::format(
      "# HELP allot_replica_leader 1 on the replica that leads, 0 on a follower.\n"
      "# TYPE allot_replica_leader gauge\nallot_replica_leader{{cluster=\"{}\"}} {}\n"
      "# HELP allot_replica_epoch The leader's lease epoch as this replica last saw it.\n"
      "# TYPE allot_replica_epoch gauge\nallot_replica_epoch {}\n"
      "# HELP allot_replica_lease_age_seconds Since the lease was last taken or renewed.\n"
      "# TYPE allot_replica_lease_age_seconds gauge\nallot_replica_lease_age_seconds {:.3f}\n"
      "# HELP allot_replica_clock_offset_seconds The database's clock less this host's; the "
      "replica keeps the database's time.\n"
      "# TYPE allot_replica_clock_offset_seconds gauge\nallot_replica_clock_offset_seconds "
      "{:.3f}\n",
      cluster_id_, leads ? 1 : 0, epoch_, static_cast<double>(lease_age_ms_) / 1000.0 + since,
      static_cast<double>(clock_.offset_ms()) / 1000.0);
}

}  // namespace allot
