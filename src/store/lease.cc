#include "store/lease.h"

#include <fmt/format.h>

namespace allot {

Status check_fence(Db& db, const Fence& fence) {
  const DbValue p[] = {fence.holder, fence.epoch};
  auto rows = db.query(fmt::format("SELECT epoch FROM leader_lease WHERE id = 1 AND holder = $1 "
                                   "AND epoch = $2 AND expires_ms > {} FOR SHARE",
                                   kDbNowMs),
                       p);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) {
    return fail(
        ErrorCode::kNotLeader,
        fmt::format("this replica's lease (epoch {}) has ended: it no longer leads", fence.epoch));
  }
  return {};
}

Result<std::unique_ptr<Lease>> Lease::open(const std::string& postgres_url, std::string holder,
                                           std::string url, int64_t duration_ms) {
  auto db = open_postgres_db(postgres_url);
  if (!db) return std::unexpected(db.error());
  return std::make_unique<Lease>(std::move(*db), std::move(holder), std::move(url), duration_ms);
}

Lease::Lease(std::unique_ptr<Db> db, std::string holder, std::string url, int64_t duration_ms)
    : db_(std::move(db)),
      holder_(std::move(holder)),
      url_(std::move(url)),
      duration_ms_(duration_ms) {}

Result<LeaseRow> Lease::read() {
  auto rows = db_->query(
      fmt::format("SELECT holder, url, epoch, expires_ms, {} FROM leader_lease WHERE id = 1",
                  kDbNowMs),
      {});
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return LeaseRow{};
  const DbRow& r = rows->front();
  return LeaseRow{.holder = db_text(r.at(0)),
                  .url = db_text(r.at(1)),
                  .epoch = db_int(r.at(2)),
                  .expires_ms = db_int(r.at(3)),
                  .now_ms = db_int(r.at(4))};
}

Result<std::optional<int64_t>> Lease::try_acquire() {
  // A row deleted by hand is put back free. Fences name the holder as well as the epoch, so an
  // old leader's fence cannot match what is taken after.
  if (auto ok = db_->exec(
          "INSERT INTO leader_lease (id, holder, url, epoch, expires_ms) VALUES (1, '', '', 0, 0) "
          "ON CONFLICT (id) DO NOTHING",
          {});
      !ok) {
    return std::unexpected(ok.error());
  }
  const DbValue p[] = {holder_, url_, duration_ms_};
  auto rows = db_->query(
      fmt::format("UPDATE leader_lease SET holder = $1, url = $2, epoch = epoch + 1, "
                  "expires_ms = {0} + $3 WHERE id = 1 AND (expires_ms <= {0} OR holder = '' "
                  "OR expires_ms > {0} + 2 * $3) RETURNING epoch",
                  kDbNowMs),
      p);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return std::nullopt;
  return db_int(rows->front().at(0));
}

Result<bool> Lease::renew(int64_t epoch) {
  const DbValue p[] = {holder_, epoch, duration_ms_};
  auto rows = db_->query(fmt::format("UPDATE leader_lease SET expires_ms = {} + $3 WHERE id = 1 "
                                     "AND holder = $1 AND epoch = $2 RETURNING epoch",
                                     kDbNowMs),
                         p);
  if (!rows) return std::unexpected(rows.error());
  return !rows->empty();
}

Status Lease::release(int64_t epoch) {
  const DbValue p[] = {holder_, epoch};
  return db_->exec(
      "UPDATE leader_lease SET holder = '', expires_ms = 0 WHERE id = 1 AND holder = $1 AND "
      "epoch = $2",
      p);
}

Status Lease::announce() {
  const DbValue key[] = {url_};
  auto rows = db_->query(
      fmt::format("SELECT holder, {} - seen_ms FROM replicas WHERE url = $1", kDbNowMs), key);
  if (!rows) return std::unexpected(rows.error());
  if (!rows->empty()) {
    const std::string other = db_text(rows->front().at(0));
    const int64_t age_ms = db_int(rows->front().at(1));
    if (other != holder_ && age_ms < duration_ms_) {
      return fail(ErrorCode::kAlreadyExists,
                  fmt::format("another allotd ({}) advertises {}, seen {} ms ago: give each "
                              "replica its own --advertise-url",
                              other, url_, age_ms));
    }
  }
  const DbValue p[] = {url_, holder_};
  return db_->exec(fmt::format("INSERT INTO replicas (url, holder, seen_ms) VALUES ($1, $2, {0}) "
                               "ON CONFLICT (url) DO UPDATE SET holder = $2, seen_ms = {0}",
                               kDbNowMs),
                   p);
}

Result<std::vector<ReplicaRow>> Lease::replicas() {
  auto rows = db_->query(fmt::format(
      "SELECT url, holder, seen_ms, {} - seen_ms FROM replicas ORDER BY url", kDbNowMs));
  if (!rows) return std::unexpected(rows.error());
  std::vector<ReplicaRow> out;
  out.reserve(rows->size());
  for (const DbRow& r : *rows) {
    out.push_back(ReplicaRow{.url = db_text(r.at(0)),
                             .holder = db_text(r.at(1)),
                             .seen_ms = db_int(r.at(2)),
                             .age_ms = db_int(r.at(3))});
  }
  return out;
}

Result<std::string> Lease::shared_setting(const std::string& name, const std::string& value) {
  const DbValue p[] = {name, value};
  if (auto ok = db_->exec("INSERT INTO cluster_settings (name, value) VALUES ($1, $2) ON CONFLICT "
                          "(name) DO NOTHING",
                          p);
      !ok) {
    return std::unexpected(ok.error());
  }
  const DbValue key[] = {name};
  auto rows = db_->query("SELECT value FROM cluster_settings WHERE name = $1", key);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return fail(ErrorCode::kInternal, "a shared setting vanished");
  return db_text(rows->front().at(0));
}

}  // namespace allot
