// Durable storage behind one interface with two backends: SQLite (the embedded default) and
// PostgreSQL. A batch is written in one transaction; when commit() returns, it is durable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/kernel/row.h"
#include "ledger/ledger.h"

namespace allot {

// One mutating API call: who made it, what it was and how it ended.
struct AuditEntry {
  int64_t seq = 0;  // Increasing; assigned by the daemon.
  TimeMs at_ms = 0;
  std::string tenant_id;  // The caller's tenant; empty when the caller was not identified.
  std::string user_id;
  std::string key_id;
  std::string method;
  std::string path;
  std::string target_id;   // The object created or changed, when there is one.
  int status = 0;          // The HTTP status of the answer.
  std::string error_code;  // Empty on success.

  bool operator==(const AuditEntry&) const = default;
};

struct AuditQuery {
  std::optional<std::string> tenant_id;  // Unset: every tenant.
  int64_t after_seq = 0;                 // Entries with seq greater than this.
  int limit = 100;
};

struct EventQuery {
  std::optional<std::string> tenant_id;  // Unset: every tenant.
  int64_t after_seq = 0;                 // Events with seq greater than this.
  int limit = 100;
};

// Where a webhook delivery stands.
struct DeliveryStatus {
  std::string state;  // "pending", "delivered" or "failed" (out of attempts).
  int64_t attempts = 0;
  TimeMs next_attempt_ms = 0;
  std::string last_status;  // The last attempt's HTTP status, or why it reached no server.

  bool operator==(const DeliveryStatus&) const = default;
};

struct StoredEvent {
  Event event;
  std::optional<DeliveryStatus> delivery;  // Set when the event goes to a webhook.
};

// A delivery that is due: the event (with its URL) and the secret that signs it.
struct Delivery {
  Event event;
  std::string secret;
  DeliveryStatus status;
};

// One attempt's result and what follows from it.
struct DeliveryAttempt {
  int64_t event_seq = 0;
  TimeMs at_ms = 0;
  std::string result;  // As DeliveryStatus::last_status.
  DeliveryStatus next;
};

// A piece of an instance's output, as its node shipped it: `data` starts at byte `offset`.
struct LogPiece {
  std::string instance_id;
  int64_t offset = 0;
  std::string data;

  bool operator==(const LogPiece&) const = default;
};

// Everything one group commit writes.
struct Batch {
  std::vector<Row> rows;
  std::vector<AuditEntry> audit;
  std::vector<LogPiece> logs;
};

// The lease a leading replica holds (store/lease.h). While a store has one, each of its write
// transactions first checks, in the same transaction and under a row lock that a takeover must
// wait for, that the lease row still names this holder at this epoch and has not expired on the
// database's clock. A write that finds otherwise fails with kNotLeader and writes nothing.
struct Fence {
  std::string holder;
  int64_t epoch = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Writes the batch in one transaction. On success it is durable; on failure nothing of it is
  // written and the error is kUnavailable.
  [[nodiscard]] virtual Status commit(const Batch& batch) = 0;

  // Every object, in an order that Core::restore accepts (tenants before what they hold).
  [[nodiscard]] virtual Result<std::vector<Row>> load() = 0;

  // Audit entries matching the query, oldest first.
  [[nodiscard]] virtual Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) = 0;

  // The highest audit seq written so far, 0 when there is none.
  [[nodiscard]] virtual Result<int64_t> last_audit_seq() = 0;

  // Events matching the query, oldest first, with their webhook delivery's status.
  [[nodiscard]] virtual Result<std::vector<StoredEvent>> list_events(const EventQuery& query) = 0;

  // The webhook outbox: pending deliveries due at `now_ms`, oldest first, at most `limit`; and
  // one attempt's result, recorded durably with the delivery's new status.
  [[nodiscard]] virtual Result<std::vector<Delivery>> due_deliveries(TimeMs now_ms, int limit) = 0;
  [[nodiscard]] virtual Status record_delivery_attempt(const DeliveryAttempt& attempt) = 0;

  // The ledger's journal. Accounts are written when made; transfers as they were asked, with the
  // time they were made, at journal positions first_seq, first_seq + 1, ... in one transaction
  // (durable on success). Balances are not stored: loading replays the journal into a fresh
  // ledger, which fails (kInternal) if a stored transfer does not apply or the sums are not zero.
  [[nodiscard]] virtual Status put_ledger_accounts(std::span<const ledger::Account> accounts) = 0;
  [[nodiscard]] virtual Status append_transfers(std::span<const ledger::Transfer> transfers,
                                                int64_t first_seq) = 0;
  [[nodiscard]] virtual Result<ledger::Ledger> load_ledger() = 0;

  // Instances' output. The size is where the next byte goes (0 when nothing is held); a read
  // returns the pieces that hold any byte of [from, to), in order.
  [[nodiscard]] virtual Result<int64_t> log_size(const std::string& instance_id) = 0;
  [[nodiscard]] virtual Result<std::vector<LogPiece>> read_log(const std::string& instance_id,
                                                               int64_t from, int64_t to) = 0;
  // Where the first piece at or after `from` starts; nullopt when none does. Output can have
  // holes: its oldest part dropped past limits::kMaxStoredLogBytes, or what an agent dropped
  // of an instance that wrote faster than it ships.
  [[nodiscard]] virtual Result<std::optional<int64_t>> next_log_start(
      const std::string& instance_id, int64_t from) = 0;

  // Fences every later write with the lease (PostgreSQL only); nullopt lifts it.
  virtual void set_fence(std::optional<Fence> fence) = 0;

  // The schema version after migrations ran.
  virtual int schema_version() const = 0;

  // "sqlite" or "postgres".
  virtual std::string_view backend() const = 0;
};

// Opens (creating if needed) the SQLite database at `path` and runs pending migrations.
[[nodiscard]] Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path);

// Connects to PostgreSQL (a libpq URL or key=value string) and runs pending migrations.
[[nodiscard]] Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url);

}  // namespace allot
