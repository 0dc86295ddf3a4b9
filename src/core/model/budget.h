// Budgets: a monthly amount of spend per tenant (or one of its projects), the thresholds at which
// it alerts, where the alerts go, and what happens to work once the amount is spent. Alerts and
// the event log they write to are kept here too, since the core decides when they happen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace allot {

enum class Enforcement {
  kNone,         // Alerts only.
  kBlockNew,     // New work is not admitted while the month's spend is at or over the amount.
  kStopRunning,  // As block_new, and running work is stopped when the spend reaches the amount.
};

std::string_view enforcement_name(Enforcement enforcement);
std::optional<Enforcement> parse_enforcement(std::string_view text);

struct Budget {
  std::string id;  // "bud_" + 16 hex
  std::string tenant_id;
  std::string project_id;     // Empty: the whole tenant.
  int64_t amount_micros = 0;  // Per calendar month (UTC).
  std::vector<int64_t> thresholds_pct;
  std::string webhook_url;     // Empty: no webhook.
  std::string webhook_secret;  // Signs every delivery; kept because it must sign.
  Enforcement enforcement = Enforcement::kNone;
  TimeMs created_at_ms = 0;
  TimeMs updated_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0 while it applies.

  bool operator==(const Budget&) const = default;
  bool live() const { return deleted_at_ms == 0; }
};

// One threshold reached in one month: recorded once, so that it alerts once.
struct BudgetAlert {
  std::string budget_id;
  std::string month;  // "2026-12"
  int64_t threshold_pct = 0;
  int64_t spend_micros = 0;  // The month's spend when it was reached.
  TimeMs at_ms = 0;

  bool operator==(const BudgetAlert&) const = default;
  std::string key() const { return key_of(budget_id, month, threshold_pct); }
  static std::string key_of(const std::string& budget_id, const std::string& month,
                            int64_t threshold_pct);
};

// An entry of the append-only event log. The core numbers events; the store keeps them all, and
// the core keeps only the last seq (so that numbering continues after a restart).
struct Event {
  int64_t seq = 0;
  TimeMs at_ms = 0;
  std::string tenant_id;
  std::string kind;     // e.g. "budget.threshold"
  std::string payload;  // A JSON object's text.
  // Where the event is to be delivered, if anywhere: the store queues a delivery with it, in the
  // same transaction, and the daemon's sender signs it with this budget's secret.
  std::string webhook_budget_id;
  std::string webhook_url;

  bool operator==(const Event&) const = default;
  // "evt_" + the seq in 16 hex digits.
  std::string id() const;
};

}  // namespace allot
