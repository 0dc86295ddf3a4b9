// The spot price rule (core/model/spot_rule.h): its commands, the utilisation it follows, and the
// tick that turns the curve's price into spot prices in the catalog.
#include "core/pools/spot_rules.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/validate.h"

namespace allot {

int64_t price_on_curve(const std::vector<CurvePoint>& curve, int64_t utilisation_permille) {
  const int64_t x = std::clamp<int64_t>(utilisation_permille, 0, 1000);
  for (size_t i = 1; i < curve.size(); ++i) {
    const int64_t x0 = int64_t{curve[i - 1].utilisation_pct} * 10;
    const int64_t x1 = int64_t{curve[i].utilisation_pct} * 10;
    if (x > x1) continue;
    const int64_t y0 = curve[i - 1].gpu_hour_micros;
    const int64_t y1 = curve[i].gpu_hour_micros;
    // Curve prices are at most 10^12 micro-units and x1 - x0 at most 1000: the products fit.
    // Rounded down also where the curve falls (integer division alone would round up there).
    const int64_t rise = (y1 - y0) * (x - x0);
    const int64_t run = x1 - x0;
    return y0 + rise / run - (rise % run < 0 ? 1 : 0);
  }
  return curve.empty() ? 0 : curve.back().gpu_hour_micros;
}

namespace {

Status check_curve(const std::vector<CurvePoint>& curve) {
  if (curve.size() < 2 || curve.size() > limits::kMaxSpotCurvePoints) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a curve has 2 to {} points", limits::kMaxSpotCurvePoints));
  }
  if (curve.front().utilisation_pct != 0 || curve.back().utilisation_pct != 100) {
    return fail(ErrorCode::kInvalidArgument, "a curve starts at 0 % and ends at 100 %");
  }
  for (size_t i = 0; i < curve.size(); ++i) {
    const CurvePoint& p = curve[i];
    if (p.gpu_hour_micros < 0 || p.gpu_hour_micros > limits::kMaxSpotPriceMicros) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("point {}: a price must be between 0 and 1000000 per GPU-hour", i));
    }
    if (i > 0 && p.utilisation_pct <= curve[i - 1].utilisation_pct) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("point {}: utilisation must rise from point to point", i));
    }
  }
  return {};
}

}  // namespace

Result<Rows> apply(const State& state, const SetSpotRule& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  SpotRule rule = c.rule;
  if (!is_catalog_gpu_model(rule.model)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("unknown GPU model '{}': a catalog model, e.g. H100-80GB", rule.model));
  }
  if (auto ok = check_name("region", rule.region); !ok) return std::unexpected(ok.error());
  if (auto ok = check_curve(rule.curve); !ok) return std::unexpected(ok.error());
  if (rule.interval_ms < limits::kMinSpotIntervalMs ||
      rule.interval_ms > limits::kMaxSpotIntervalMs) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("the interval must be between {} s and {} s",
                            limits::kMinSpotIntervalMs / 1000, limits::kMaxSpotIntervalMs / 1000));
  }
  const auto old = state.spot_rules.find(rule.key());
  if (old == state.spot_rules.end() && state.spot_rules.size() >= limits::kMaxSpotRules) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("at most {} spot price rules", limits::kMaxSpotRules));
  }
  rule.created_at_ms = old == state.spot_rules.end() ? now_ms : old->second.created_at_ms;
  rule.last_priced_ms = 0;  // A new curve prices at the next tick.
  return Rows{rule};
}

Result<Rows> apply(const State& state, const DeleteSpotRule& c, TimeMs /*now_ms*/,
                   const Placing& /*placing*/) {
  const auto found = state.spot_rules.find(c.model + "/" + c.region);
  if (found == state.spot_rules.end()) {
    return fail(ErrorCode::kNotFound,
                fmt::format("no spot price rule for {} in {}", c.model, c.region));
  }
  SpotRule gone = found->second;
  gone.curve.clear();  // A rule without a curve is a deleted one; the store drops it.
  return Rows{gone};
}

int64_t gpu_utilisation_permille(const State& state, const std::string& model,
                                 const std::string& region) {
  int64_t capacity = 0;
  int64_t used = 0;
  for (const auto& [id, node] : state.nodes) {
    if (node.lost || node.region != region) continue;
    for (const Gpu& gpu : node.gpus) {
      if (gpu.model != model || !gpu.healthy) continue;
      capacity += 1000;
      used += gpu.used_milli;
    }
  }
  return capacity == 0 ? 0 : used * 1000 / capacity;
}

Rows spot_rule_tick(const State& state, TimeMs now_ms) {
  Rows rows;
  for (const auto& [key, rule] : state.spot_rules) {
    if (rule.last_priced_ms != 0 && now_ms - rule.last_priced_ms < rule.interval_ms) continue;
    SpotRule looked = rule;
    looked.last_priced_ms = now_ms;
    const meter::PriceKey price_key{
        .model = rule.model, .region = rule.region, .price_class = PriceClass::kSpot};
    const int64_t wanted =
        price_on_curve(rule.curve, gpu_utilisation_permille(state, rule.model, rule.region));
    const meter::Price* current = state.prices.at(price_key, now_ms);
    const bool taken = state.prices.prices().contains(price_key) &&
                       state.prices.prices().at(price_key).contains(now_ms);
    if ((current == nullptr || current->gpu_hour_micros != wanted) && !taken) {
      meter::Price next{.key = price_key, .effective_ms = now_ms, .gpu_hour_micros = wanted};
      if (current != nullptr) {
        next.cpu_hour_micros = current->cpu_hour_micros;
        next.memory_gib_hour_micros = current->memory_gib_hour_micros;
      }
      rows.emplace_back(next);
    }
    rows.emplace_back(std::move(looked));
  }
  return rows;
}

// A rule without a curve is one that was deleted.
void put(State& state, const SpotRule& rule) {
  if (rule.curve.empty()) {
    state.spot_rules.erase(rule.key());
  } else {
    state.spot_rules[rule.key()] = rule;
  }
}

}  // namespace allot
