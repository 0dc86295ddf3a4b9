#include "store/budget_store.h"

#include <fmt/format.h>

#include "common/document.h"
#include "store/codecs/codec.h"

namespace allot {
namespace {

using nlohmann::json;

constexpr std::string_view kInsertEvent =
    "INSERT INTO events (seq, at_ms, tenant_id, kind, payload) VALUES ($1, $2, $3, $4, $5)";
constexpr std::string_view kInsertDelivery =
    "INSERT INTO webhook_deliveries (event_seq, budget_id, url, state, attempts, "
    "next_attempt_ms, last_status) VALUES ($1, $2, $3, 'pending', 0, $4, '')";
constexpr std::string_view kEventColumns =
    "SELECT e.seq, e.at_ms, e.tenant_id, e.kind, e.payload, d.url, d.state, d.attempts, "
    "d.next_attempt_ms, d.last_status, d.budget_id FROM events e "
    "LEFT JOIN webhook_deliveries d ON d.event_seq = e.seq ";

Event event_of(const DbRow& r) {
  return Event{.seq = db_int(r[0]),
               .at_ms = db_int(r[1]),
               .tenant_id = db_text(r[2]),
               .kind = db_text(r[3]),
               .payload = db_text(r[4])};
}

// Columns 5..10 of kEventColumns: the delivery, when the event has one.
std::optional<DeliveryStatus> delivery_of(const DbRow& r, Event& event) {
  if (std::holds_alternative<std::monostate>(r[5])) return std::nullopt;
  event.webhook_url = db_text(r[5]);
  event.webhook_budget_id = db_text(r[10]);
  return DeliveryStatus{.state = db_text(r[6]),
                        .attempts = db_int(r[7]),
                        .next_attempt_ms = db_int(r[8]),
                        .last_status = db_text(r[9])};
}

}  // namespace

// Not in the unnamed namespace: nlohmann finds these by argument-dependent lookup.
static void to_json(json& doc, Enforcement e) { doc = enforcement_name(e); }
static void from_json(const json& doc, Enforcement& e) { read_name(doc, e, parse_enforcement); }

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Budget, id, tenant_id, project_id, amount_micros, thresholds_pct,
                                   webhook_url, webhook_secret, enforcement, created_at_ms,
                                   updated_at_ms, deleted_at_ms)

json budget_document(const Budget& b) { return b; }

Result<Budget> budget_from_document(const json& d) { return from_document<Budget>(d, "budget"); }

json event_json(const Event& e) {
  return {{"id", e.id()},
          {"seq", e.seq},
          {"at", format_time(e.at_ms)},
          {"tenant_id", e.tenant_id},
          {"kind", e.kind},
          {"data", json::parse(e.payload, nullptr, false)}};
}

Status write_budget_row(Db& db, const Event& e) {
  const DbValue p[] = {e.seq, e.at_ms, e.tenant_id, e.kind, e.payload};
  if (auto ok = db.exec(kInsertEvent, p); !ok) return ok;
  if (e.webhook_url.empty()) return {};
  // The outbox entry commits with the event, so that no event is lost or sent without a record.
  const DbValue d[] = {e.seq, e.webhook_budget_id, e.webhook_url, e.at_ms};
  return db.exec(kInsertDelivery, d);
}

Status load_last_event(Db& db, std::vector<Row>& out) {
  return load_each(
      db, "SELECT seq, at_ms, tenant_id, kind, payload FROM events ORDER BY seq DESC LIMIT 1", out,
      event_of);
}

Result<std::vector<StoredEvent>> query_events(Db& db, const EventQuery& query) {
  Result<std::vector<DbRow>> rows;
  if (query.tenant_id) {
    const DbValue p[] = {query.after_seq, int64_t{query.limit}, *query.tenant_id};
    rows = db.query(fmt::format("{}WHERE e.seq > $1 AND e.tenant_id = $3 ORDER BY e.seq LIMIT $2",
                                kEventColumns),
                    p);
  } else {
    const DbValue p[] = {query.after_seq, int64_t{query.limit}};
    rows = db.query(fmt::format("{}WHERE e.seq > $1 ORDER BY e.seq LIMIT $2", kEventColumns), p);
  }
  if (!rows) return std::unexpected(rows.error());
  std::vector<StoredEvent> out;
  out.reserve(rows->size());
  for (const DbRow& r : *rows) {
    StoredEvent stored{.event = event_of(r), .delivery = std::nullopt};
    stored.delivery = delivery_of(r, stored.event);
    out.push_back(std::move(stored));
  }
  return out;
}

Result<std::vector<Delivery>> query_due_deliveries(Db& db, TimeMs now_ms, int limit) {
  const DbValue p[] = {now_ms, int64_t{limit}};
  auto rows =
      db.query(fmt::format("{}WHERE d.state = 'pending' AND d.next_attempt_ms <= $1 ORDER BY e.seq "
                           "LIMIT $2",
                           kEventColumns),
               p);
  if (!rows) return std::unexpected(rows.error());
  std::vector<Delivery> out;
  for (const DbRow& r : *rows) {
    Delivery delivery{.event = event_of(r), .secret = {}, .status = {}};
    delivery.status = delivery_of(r, delivery.event).value_or(DeliveryStatus{});
    const DbValue b[] = {delivery.event.webhook_budget_id};
    auto budget = db.query("SELECT doc FROM budgets WHERE id = $1", b);
    if (!budget) return std::unexpected(budget.error());
    if (budget->empty()) continue;
    auto parsed = budget_from_document(json::parse(db_text(budget->at(0).at(0)), nullptr, false));
    if (!parsed) return std::unexpected(parsed.error());
    delivery.secret = parsed->webhook_secret;
    out.push_back(std::move(delivery));
  }
  return out;
}

Status write_delivery_attempt(Db& db, const DeliveryAttempt& a) {
  const DbValue attempt[] = {a.event_seq, a.next.attempts, a.at_ms, a.result};
  if (auto ok = db.exec("INSERT INTO webhook_attempts (event_seq, attempt, at_ms, result) "
                        "VALUES ($1, $2, $3, $4)",
                        attempt);
      !ok) {
    return ok;
  }
  const DbValue p[] = {a.event_seq, a.next.state, a.next.attempts, a.next.next_attempt_ms,
                       a.next.last_status};
  return db.exec(
      "UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_ms = $4, "
      "last_status = $5 WHERE event_seq = $1",
      p);
}

}  // namespace allot
