#include "sim/scenario.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/money.h"
#include "core/kernel/gpu_models.h"
#include "sim/scenario_books.h"
#include "sim/scenario_fields.h"
#include "sim/scenario_pools.h"

namespace allot::sim {

using nlohmann::json;

Result<std::string> Fields::text(std::string_view key, std::optional<std::string> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    return std::unexpected(bad(at(key), "required"));
  }
  if (!doc_.at(key).is_string() || doc_.at(key).get<std::string>().empty()) {
    return std::unexpected(bad(at(key), "must be a non-empty string"));
  }
  return doc_.at(key).get<std::string>();
}

Result<int64_t> Fields::integer(std::string_view key, std::optional<int64_t> fallback, int64_t min,
                                int64_t max) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    return std::unexpected(bad(at(key), "required"));
  }
  const json& v = doc_.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max) {
    return std::unexpected(bad(at(key), fmt::format("must be a whole number {} to {}", min, max)));
  }
  return v.get<int64_t>();
}

Result<int64_t> Fields::amount(std::string_view key, bool zero_ok) const {
  auto t = text(key, zero_ok ? std::optional<std::string>("0") : std::nullopt);
  if (!t) return std::unexpected(t.error());
  auto money = Money::parse(*t);
  if (!money) return std::unexpected(bad(at(key), money.error().message));
  if (money->micros() < 0 || (!zero_ok && money->micros() == 0)) {
    return std::unexpected(bad(at(key), zero_ok ? "must not be negative" : "must be above 0"));
  }
  return money->micros();
}

Result<int64_t> Fields::scaled(std::string_view key, int decimals,
                               std::optional<int64_t> fallback) const {
  if (!has(key) && fallback) return *fallback;
  TRY(t, text(key));
  // Money reads exactly six decimals; fewer are a whole number of its micro-units.
  auto value = Money::parse(t);
  if (!value) return std::unexpected(bad(at(key), value.error().message));
  int64_t unit = 1;
  for (int i = decimals; i < 6; ++i) unit *= 10;
  if (value->micros() < 0) return std::unexpected(bad(at(key), "must not be negative"));
  if (value->micros() % unit != 0) {
    return std::unexpected(bad(at(key), fmt::format("at most {} decimals", decimals)));
  }
  return value->micros() / unit;
}

Result<bool> Fields::flag(std::string_view key) const {
  if (!has(key)) return false;
  if (!doc_.at(key).is_boolean()) return std::unexpected(bad(at(key), "must be true or false"));
  return doc_.at(key).get<bool>();
}

namespace {

Result<PriceClass> price_class_at(const Fields& f) {
  TRY(name, f.text("class", "on-demand"));
  auto parsed = parse_price_class(name);
  if (!parsed) return std::unexpected(bad(f.at("class"), "must be on-demand, spot or reserved"));
  return *parsed;
}

Result<meter::Price> price_at(const Fields& f, int64_t at_s) {
  TRY(model, f.text("model"));
  if (!is_known_gpu_model(model)) return std::unexpected(bad(f.at("model"), "unknown GPU model"));
  TRY(region, f.text("region"));
  TRY(price_class, price_class_at(f));
  TRY(rate, f.amount("per_gpu_hour", true));
  return meter::Price{.key = {.model = model, .region = region, .price_class = price_class},
                      .effective_ms = at_s,
                      .gpu_hour_micros = rate};
}

Result<ScenarioTopup> topup_at(const Fields& f, int64_t at_s, const std::string& tenant) {
  TRY(amount, f.amount("amount"));
  TRY(credit, f.flag("credit"));
  TRY(expires, f.integer("expires", 0, 0, kMaxSeconds));
  if (expires != 0 && (!credit || expires <= at_s)) {
    return std::unexpected(bad(f.at("expires"), "only a credit expires, and after it is given"));
  }
  return ScenarioTopup{.at_s = at_s,
                       .tenant = tenant,
                       .amount_micros = amount,
                       .credit = credit,
                       .expires_s = expires};
}

Result<ScenarioEvent> submit_at(const Fields& f, ScenarioEvent e) {
  TRY(id, f.text("id"));
  TRY(tenant, f.text("tenant"));
  TRY(project, f.text("project", "default"));
  e.id = id;
  e.tenant = tenant;
  e.project = project;
  if (f.has("gpus") == f.has("gpu_milli")) {
    return std::unexpected(bad(f.at("gpus"), "give either gpus or gpu_milli"));
  }
  TRY(gpus, f.integer("gpus", 0, 0, 8));
  TRY(milli, f.integer("gpu_milli", 0, 0, 999));
  e.spec.gpus = static_cast<int>(gpus);
  e.spec.gpu_milli = static_cast<int>(milli);
  if (f.has("model")) {
    TRY(model, f.text("model"));
    if (!is_known_gpu_model(model)) return std::unexpected(bad(f.at("model"), "unknown GPU model"));
    e.spec.gpu_models = {model};
  }
  TRY(region, f.text("region", ""));
  e.spec.region = region;
  TRY(price_class, price_class_at(f));
  e.spec.price_class = price_class;
  TRY(max_price, f.amount("max_price", true));
  e.spec.max_price_micros = max_price;
  TRY(run_s, f.integer("run_s", 0, 0, kMaxSeconds));
  e.run_s = run_s;
  e.spec.command = {"sim"};
  e.spec.interactive = run_s == 0;
  return e;
}

Result<ScenarioEvent> event_at(const json& doc, size_t index) {
  const std::string where = fmt::format("events[{}]", index);
  if (!doc.is_object()) return std::unexpected(bad(where, "must be an object"));
  const Fields f(doc, where);
  TRY(at, f.integer("at", std::nullopt, 0, kMaxSeconds));
  TRY(type, f.text("type"));
  ScenarioEvent e{.at_s = at, .where = where};
  if (type == "submit") return submit_at(f, e);
  if (auto books = books_event_at(f, type, e)) return *books;
  if (type == "stop") {
    e.kind = EventKind::kStop;
    TRY(id, f.text("id"));
    e.id = id;
  } else if (type == "fail_node" || type == "restore_node") {
    e.kind = type == "fail_node" ? EventKind::kFailNode : EventKind::kRestoreNode;
    TRY(node, f.text("node"));
    e.node = node;
  } else if (type == "topup") {
    e.kind = EventKind::kTopup;
    TRY(tenant, f.text("tenant"));
    TRY(topup, topup_at(f, at, tenant));
    e.topup = topup;
  } else if (type == "price") {
    e.kind = EventKind::kPrice;
    TRY(price, price_at(f, at));
    e.price = price;
  } else {
    return std::unexpected(
        bad(f.at("type"),
            "must be submit, stop, fail_node, restore_node, topup, price, power_price, carbon, "
            "retire or change_estimate"));
  }
  return e;
}

Result<ScenarioNode> node_at(const json& doc, size_t index) {
  const std::string where = fmt::format("nodes[{}]", index);
  if (!doc.is_object()) return std::unexpected(bad(where, "must be an object"));
  const Fields f(doc, where);
  TRY(name, f.text("name"));
  TRY(region, f.text("region"));
  TRY(gpus, f.text("gpus"));
  const size_t x = gpus.find('x');
  const std::string model = x == std::string::npos ? "" : gpus.substr(x + 1);
  const std::string digits = gpus.substr(0, x);
  const bool numeric =
      !digits.empty() && digits.size() <= 2 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int count = numeric ? std::stoi(digits) : 0;
  if (x == std::string::npos || count < 1 || count > 16 || !is_known_gpu_model(model)) {
    return std::unexpected(bad(f.at("gpus"), "must be COUNTxMODEL, e.g. 8xH100-80GB"));
  }
  const auto [idle_default, busy_default] = default_gpu_power(model);
  TRY(idle_w, f.integer("gpu_idle_w", idle_default, 0, 10'000));
  TRY(busy_w, f.integer("gpu_busy_w", std::max(busy_default, idle_w), idle_w, 10'000));
  return ScenarioNode{.name = name,
                      .region = region,
                      .gpus = count,
                      .model = model,
                      .idle_w = idle_w,
                      .busy_w = busy_w};
}

Status tenant_at(const json& doc, size_t index, Scenario& out) {
  const std::string where = fmt::format("tenants[{}]", index);
  if (!doc.is_object()) return std::unexpected(bad(where, "must be an object"));
  const Fields f(doc, where);
  TRY(name, f.text("name"));
  TRY(billing_name, f.text("billing", "postpaid"));
  auto billing = parse_billing_mode(billing_name);
  if (!billing) return std::unexpected(bad(f.at("billing"), "must be prepaid or postpaid"));
  TRY(limit, f.amount("credit_limit", true));
  if (*billing == BillingMode::kPrepaid && limit != 0) {
    return std::unexpected(bad(f.at("credit_limit"), "a prepaid tenant has no credit limit"));
  }
  out.tenants.push_back({.name = name, .billing = *billing, .credit_limit_micros = limit});
  const json topups = doc.value("topups", json::array());
  if (!topups.is_array()) return std::unexpected(bad(f.at("topups"), "must be a list"));
  for (size_t i = 0; i < topups.size(); ++i) {
    const Fields t(topups[i], fmt::format("{}.topups[{}]", where, i));
    if (!topups[i].is_object()) return std::unexpected(bad(t.at(""), "must be an object"));
    TRY(at, t.integer("at", 0, 0, kMaxSeconds));
    TRY(topup, topup_at(t, at, name));
    out.events.push_back(ScenarioEvent{.at_s = at, .kind = EventKind::kTopup, .topup = topup});
  }
  return {};
}

// Names must be unique, and every reference must name something defined.
Status check_references(const Scenario& s) {
  std::set<std::string> nodes, tenants, ids;
  for (const auto& n : s.nodes) {
    if (!nodes.insert(n.name).second) return std::unexpected(bad("nodes", "duplicate " + n.name));
  }
  for (const auto& t : s.tenants) {
    if (!tenants.insert(t.name).second) {
      return std::unexpected(bad("tenants", "duplicate " + t.name));
    }
  }
  for (size_t i = 0; i < s.events.size(); ++i) {
    const ScenarioEvent& e = s.events[i];
    const std::string where = fmt::format("event at {} s", e.at_s);
    if (e.kind == EventKind::kSubmit && !tenants.contains(e.tenant)) {
      return std::unexpected(bad(where, "unknown tenant " + e.tenant));
    }
    if (e.kind == EventKind::kTopup && !tenants.contains(e.topup.tenant)) {
      return std::unexpected(bad(where, "unknown tenant " + e.topup.tenant));
    }
    if (e.kind == EventKind::kSubmit && !ids.insert(e.id).second) {
      return std::unexpected(bad(where, "instance id used twice: " + e.id));
    }
    if (e.kind == EventKind::kStop && !ids.contains(e.id)) {
      return std::unexpected(bad(where, "stops an instance not yet submitted: " + e.id));
    }
    if ((e.kind == EventKind::kFailNode || e.kind == EventKind::kRestoreNode) &&
        !nodes.contains(e.node)) {
      return std::unexpected(bad(where, "unknown node " + e.node));
    }
  }
  return {};
}

}  // namespace

Result<Scenario> parse_scenario(const json& doc) {
  if (!doc.is_object()) return std::unexpected(bad("scenario", "must be a JSON object"));
  const Fields f(doc, "scenario");
  Scenario s;
  TRY(start, f.text("start"));
  auto start_ms = parse_time(start);
  if (!start_ms) return std::unexpected(bad("start", "must be an RFC 3339 time in UTC"));
  s.start_ms = *start_ms;
  TRY(until, f.integer("until", std::nullopt, 1, kMaxSeconds));
  TRY(heartbeat, f.integer("heartbeat_s", 10, 1, 3'600));
  TRY(rating, f.integer("rating_interval_s", 3'600, 1, int64_t{86'400} * 31));
  TRY(runway, f.integer("runway_s", 3'600, 0, int64_t{86'400} * 31));
  TRY(policy, f.text("policy", "allot"));
  s.until_s = until;
  s.heartbeat_s = heartbeat;
  s.rating_interval_s = rating;
  s.runway_s = runway;
  s.policy = policy;
  auto nodes = each_of(doc, "nodes", [&](const json& n, size_t i) -> Status {
    TRY(node, node_at(n, i));
    s.nodes.push_back(node);
    return {};
  });
  if (!nodes) return std::unexpected(nodes.error());
  auto prices = each_of(doc, "prices", [&](const json& p, size_t i) -> Status {
    const Fields pf(p, fmt::format("prices[{}]", i));
    if (!p.is_object()) return std::unexpected(bad(pf.at(""), "must be an object"));
    TRY(at, pf.integer("at", 0, 0, kMaxSeconds));
    TRY(price, price_at(pf, at));
    s.events.push_back(ScenarioEvent{.at_s = at, .kind = EventKind::kPrice, .price = price});
    return {};
  });
  if (!prices) return std::unexpected(prices.error());
  auto tenants =
      each_of(doc, "tenants", [&](const json& t, size_t i) { return tenant_at(t, i, s); });
  if (!tenants) return std::unexpected(tenants.error());
  auto events = each_of(doc, "events", [&](const json& e, size_t i) -> Status {
    TRY(event, event_at(e, i));
    s.events.push_back(event);
    return {};
  });
  if (!events) return std::unexpected(events.error());
  if (auto ok = parse_books(doc, s); !ok) return std::unexpected(ok.error());
  if (auto ok = parse_pools(doc, s); !ok) return std::unexpected(ok.error());
  if (auto ok = parse_workloads(doc, s); !ok) return std::unexpected(ok.error());
  // Up-front prices and top-ups first, then events, each in time order, ties as written.
  for (size_t i = 0; i < s.events.size(); ++i) s.events[i].order = i;
  std::sort(s.events.begin(), s.events.end(), [](const auto& a, const auto& b) {
    return std::pair(a.at_s, a.order) < std::pair(b.at_s, b.order);
  });
  if (auto ok = check_references(s); !ok) return std::unexpected(ok.error());
  if (auto ok = check_books_references(s); !ok) return std::unexpected(ok.error());
  return s;
}

}  // namespace allot::sim
