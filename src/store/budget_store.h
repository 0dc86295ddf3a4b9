// Budgets, the event log and the webhook outbox in SQL, shared by both backends. The
// SqlStore calls these inside its transactions; the functions themselves open none except
// record_delivery_attempt, which is one write of its own.
#pragma once

#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/budget.h"
#include "store/db.h"
#include "store/store.h"

namespace allot {

nlohmann::json budget_document(const Budget& budget);
[[nodiscard]] Result<Budget> budget_from_document(const nlohmann::json& doc);

// An event as the API lists it and as a webhook delivers it (the same bytes are signed).
nlohmann::json event_json(const Event& event);

// Writes an event; one with a webhook also queues its delivery, due at once.
[[nodiscard]] Status write_budget_row(Db& db, const Event& event);

// The last event only (for the core's event numbering).
[[nodiscard]] Status load_last_event(Db& db, std::vector<Row>& out);

[[nodiscard]] Result<std::vector<StoredEvent>> query_events(Db& db, const EventQuery& query);
[[nodiscard]] Result<std::vector<Delivery>> query_due_deliveries(Db& db, TimeMs now_ms, int limit);
[[nodiscard]] Status write_delivery_attempt(Db& db, const DeliveryAttempt& attempt);

}  // namespace allot
