// Budgets: validation of SetBudget, enforcement at admission, and alerts at the Tick.
#include "core/money/budgets.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.h"
#include "common/int128.h"
#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/lifecycle.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"
#include "core/money/spend.h"

namespace allot {
namespace {

constexpr EnumNames<Enforcement, 3> kEnforcementNames{{"none", "block_new", "stop_running"}};

std::string scope_of(const Budget& b) {
  return b.project_id.empty() ? "the tenant" : "project " + b.project_id;
}

bool applies(const Budget& b, const std::string& tenant_id, const std::string& project_id) {
  return b.live() && b.tenant_id == tenant_id &&
         (b.project_id.empty() || b.project_id == project_id);
}

bool enforces(const Budget& b) { return b.enforcement != Enforcement::kNone; }

// spend >= amount x pct / 100, without overflow: both sides in 128 bits.
bool reached(int64_t spend_micros, int64_t amount_micros, int64_t pct) {
  return Int128{spend_micros} * 100 >= Int128{amount_micros} * pct;
}

std::string money_text(int64_t micros) { return Money::from_micros(micros).to_string(); }

Status check_thresholds(const std::vector<int64_t>& thresholds) {
  if (thresholds.empty() || thresholds.size() > limits::kMaxBudgetThresholds) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("give 1 to {} thresholds", limits::kMaxBudgetThresholds));
  }
  for (size_t i = 0; i < thresholds.size(); ++i) {
    if (thresholds[i] < 1 || thresholds[i] > limits::kMaxBudgetThresholdPct) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("thresholds are percents from 1 to {}, not {}",
                              limits::kMaxBudgetThresholdPct, thresholds[i]));
    }
    if (i > 0 && thresholds[i] <= thresholds[i - 1]) {
      return fail(ErrorCode::kInvalidArgument, "thresholds must be strictly increasing");
    }
  }
  return {};
}

Status check_webhook(const SetBudget& c) {
  if (c.webhook_url.empty()) {
    if (!c.webhook_secret.empty()) {
      return fail(ErrorCode::kInvalidArgument, "a webhook secret needs a webhook URL");
    }
    return {};
  }
  if (auto ok = check_webhook_url(c.webhook_url); !ok) return ok;
  if (c.webhook_secret.size() < limits::kMinWebhookSecretBytes ||
      c.webhook_secret.size() > limits::kMaxWebhookSecretBytes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("the webhook secret must be {} to {} bytes",
                            limits::kMinWebhookSecretBytes, limits::kMaxWebhookSecretBytes));
  }
  return {};
}

// An event of the budget's, bound for its webhook if it has one.
Event budget_event(const Budget& b, const BudgetAlert& alert, std::string kind, std::string payload,
                   int64_t seq) {
  return Event{.seq = seq,
               .at_ms = alert.at_ms,
               .tenant_id = b.tenant_id,
               .kind = std::move(kind),
               .payload = std::move(payload),
               .webhook_budget_id = b.webhook_url.empty() ? "" : b.id,
               .webhook_url = b.webhook_url};
}

// The event of one threshold reached; its payload is the alert as JSON.
Event threshold_event(const Budget& b, const BudgetAlert& alert, int64_t seq) {
  return budget_event(
      b, alert, "budget.threshold",
      fmt::format(
          R"({{"budget_id":"{}","tenant_id":"{}","project_id":"{}","month":"{}","threshold_pct":{},)"
          R"("spend":"{}","amount":"{}","enforcement":"{}"}})",
          b.id, b.tenant_id, b.project_id, alert.month, alert.threshold_pct,
          money_text(alert.spend_micros), money_text(b.amount_micros),
          enforcement_name(b.enforcement)),
      seq);
}

// The event of an enforcement starting: new work is refused from now on and, for stop_running,
// the listed work (ids already quoted) is asked to stop.
Event enforced_event(const Budget& b, const BudgetAlert& alert,
                     const std::vector<std::string>& stopped, int64_t seq) {
  return budget_event(
      b, alert, "budget.enforced",
      fmt::format(R"({{"budget_id":"{}","tenant_id":"{}","project_id":"{}","month":"{}",)"
                  R"("spend":"{}","amount":"{}","enforcement":"{}","stopped":[{}]}})",
                  b.id, b.tenant_id, b.project_id, alert.month, money_text(alert.spend_micros),
                  money_text(b.amount_micros), enforcement_name(b.enforcement),
                  fmt::join(stopped.begin(), stopped.end(), ",")),
      seq);
}

bool stoppable(const Instance& i) {
  return !is_final(i.state) && i.state != InstanceState::kQueued && !i.stop_requested;
}

// Asks the budget's running work to stop; returns the ids asked, quoted for a JSON list.
std::vector<std::string> stop_budget_work(Draft& draft, const Budget& b, int64_t spent,
                                          TimeMs now_ms) {
  const std::string why = fmt::format("budget {} reached: {} spent {} of its {}", b.id, scope_of(b),
                                      money_text(spent), money_text(b.amount_micros));
  std::vector<std::string> stopped;
  for (const auto& [instance_id, instance] : draft.base().instances) {
    if (instance.tenant_id != b.tenant_id ||
        (!b.project_id.empty() && instance.project_id != b.project_id)) {
      continue;
    }
    const Instance* now = draft.instance(instance_id);
    if (now == nullptr || !stoppable(*now)) continue;
    stop_member(draft, instance_id, now_ms, why);
    stopped.push_back(fmt::format("\"{}\"", instance_id));
  }
  return stopped;
}

}  // namespace

std::string_view enforcement_name(Enforcement enforcement) {
  return kEnforcementNames.name(enforcement, "none");
}

std::optional<Enforcement> parse_enforcement(std::string_view text) {
  return kEnforcementNames.parse(text);
}

std::string BudgetAlert::key_of(const std::string& budget_id, const std::string& month,
                                int64_t threshold_pct) {
  return fmt::format("{}/{}/{}", budget_id, month, threshold_pct);
}

std::string Event::id() const { return fmt::format("evt_{:016x}", seq); }

Status check_webhook_url(std::string_view url) {
  if (url.size() > limits::kMaxWebhookUrlBytes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("the webhook URL is over {} bytes", limits::kMaxWebhookUrlBytes));
  }
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else {
    return fail(ErrorCode::kInvalidArgument, "the webhook URL must start with http:// or https://");
  }
  const bool bad_char = std::any_of(url.begin(), url.end(), [](char ch) {
    return static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f;
  });
  if (bad_char || rest.empty() || rest.front() == '/' || rest.front() == ':') {
    return fail(ErrorCode::kInvalidArgument, "the webhook URL needs a host and no spaces");
  }
  return {};
}

Result<Rows> apply(const State& state, const SetBudget& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_scope(state, c.tenant_id, c.project_id); !ok) {
    return std::unexpected(ok.error());
  }
  if (c.amount_micros <= 0) {
    return fail(ErrorCode::kInvalidArgument, "the amount must be greater than zero");
  }
  if (auto ok = check_thresholds(c.thresholds_pct); !ok) return std::unexpected(ok.error());
  if (auto ok = check_webhook(c); !ok) return std::unexpected(ok.error());
  Budget next{.id = c.id,
              .tenant_id = c.tenant_id,
              .project_id = c.project_id,
              .amount_micros = c.amount_micros,
              .thresholds_pct = c.thresholds_pct,
              .webhook_url = c.webhook_url,
              .webhook_secret = c.webhook_secret,
              .enforcement = c.enforcement,
              .created_at_ms = now_ms,
              .updated_at_ms = now_ms};
  for (const auto& [id, b] : state.budgets) {
    if (!b.live() || b.tenant_id != c.tenant_id || b.project_id != c.project_id) continue;
    // One budget per (tenant, project): this replaces its settings, and it keeps its id, so that
    // the alerts it already sent this month are not sent again.
    next.id = b.id;
    next.created_at_ms = b.created_at_ms;
    return Rows{next};
  }
  if (auto ok = check_id("id", c.id, "bud"); !ok) return std::unexpected(ok.error());
  if (state.budget(c.id) != nullptr) return fail(ErrorCode::kAlreadyExists, "budget id taken");
  return Rows{next};
}

Result<Rows> apply(const State& state, const DeleteBudget& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto deleted = deleted_copy(state.budget(c.id), "budget", c.id, now_ms);
  if (!deleted) return std::unexpected(deleted.error());
  deleted->updated_at_ms = now_ms;
  return Rows{*deleted};
}

std::optional<std::string> budget_blocks(const State& state, const std::string& tenant_id,
                                         const std::string& project_id, TimeMs now_ms) {
  std::optional<TenantSpend> spend;  // Computed at most once, and only when a budget enforces.
  for (const auto& [id, b] : state.budgets) {
    if (!applies(b, tenant_id, project_id) || !enforces(b)) continue;
    if (!spend) spend = month_spend(state, tenant_id, now_ms);
    const int64_t spent = spend->of(b.project_id);
    if (spent >= b.amount_micros) {
      return fmt::format("budget {}: {} spent {} of its {} for {}", b.id, scope_of(b),
                         money_text(spent), money_text(b.amount_micros), format_month(now_ms));
    }
  }
  return std::nullopt;
}

Status check_budget(const State& state, const std::string& tenant_id, const std::string& project_id,
                    TimeMs now_ms) {
  if (auto why = budget_blocks(state, tenant_id, project_id, now_ms)) {
    return fail(ErrorCode::kBudgetExceeded, *why);
  }
  return {};
}

bool alerted(const State& state, const Budget& b, const std::string& month, int64_t pct) {
  auto it = state.budget_alerts.find(BudgetAlert::key_of(b.id, month, pct));
  if (it == state.budget_alerts.end()) return false;
  return reached(it->second.spend_micros, b.amount_micros, pct == kEnforcedPct ? 100 : pct);
}

Rows budget_tick(Draft& draft, TimeMs now_ms) {
  const State& state = draft.base();
  std::set<std::string> tenants;
  for (const auto& [id, b] : state.budgets) {
    if (b.live()) tenants.insert(b.tenant_id);
  }
  if (tenants.empty()) return {};
  const std::string month = format_month(now_ms);
  std::map<std::string, TenantSpend> spend = month_spends(state, tenants, now_ms);
  Rows rows;
  for (const auto& [id, b] : state.budgets) {
    if (!b.live()) continue;
    const int64_t spent = spend[b.tenant_id].of(b.project_id);
    auto alert_at = [&](int64_t pct) {
      return BudgetAlert{.budget_id = b.id,
                         .month = month,
                         .threshold_pct = pct,
                         .spend_micros = spent,
                         .at_ms = now_ms};
    };
    for (int64_t pct : b.thresholds_pct) {
      if (!reached(spent, b.amount_micros, pct) || alerted(state, b, month, pct)) continue;
      BudgetAlert alert = alert_at(pct);
      rows.emplace_back(threshold_event(b, alert, draft.next_event_seq()));
      rows.emplace_back(std::move(alert));
    }
    if (!enforces(b) || spent < b.amount_micros) continue;
    const std::vector<std::string> stopped = b.enforcement == Enforcement::kStopRunning
                                                 ? stop_budget_work(draft, b, spent, now_ms)
                                                 : std::vector<std::string>{};
    // Once a month, and again whenever it stopped work that started since.
    if (alerted(state, b, month, kEnforcedPct) && stopped.empty()) continue;
    BudgetAlert alert = alert_at(kEnforcedPct);
    rows.emplace_back(enforced_event(b, alert, stopped, draft.next_event_seq()));
    rows.emplace_back(std::move(alert));
  }
  return rows;
}

void put(State& state, const Budget& budget) { state.budgets[budget.id] = budget; }

void put(State& state, const BudgetAlert& alert) { state.budget_alerts[alert.key()] = alert; }

}  // namespace allot
