// Spot price rules: operator admins set the curve a model's spot price follows in a region;
// anyone with a key reads the rules, the utilisation they follow and the prices they set.
#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/pools.h"
#include "api/routes_util.h"
#include "common/limits.h"
#include "common/money.h"
#include "core/pools/spot_rules.h"

namespace allot {
namespace {

using nlohmann::json;

// How many of a rule's latest prices a listing shows.
constexpr size_t kHistoryShown = 50;

std::string decimal(int64_t micros) { return Money::from_micros(micros).to_string(); }

// {"utilisation_pct": 0, "gpu_hour": "1.00"}, ...: the curve's points as the operator wrote them.
Result<std::vector<CurvePoint>> read_curve(const json& points) {
  if (!points.is_array() || points.size() > limits::kMaxSpotCurvePoints) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("'curve' must be an array of at most {} points", limits::kMaxSpotCurvePoints));
  }
  std::vector<CurvePoint> curve;
  curve.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    const bool shaped = p.is_object() && p.size() == 2 && p.contains("utilisation_pct") &&
                        p["utilisation_pct"].is_number_integer() && p.contains("gpu_hour") &&
                        p["gpu_hour"].is_string();
    if (!shaped) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("curve[{}] must be {{\"utilisation_pct\": 0..100, \"gpu_hour\": "
                              "\"2.50\"}}",
                              i));
    }
    const int64_t pct = p["utilisation_pct"].get<int64_t>();
    auto price = Money::parse(p["gpu_hour"].get<std::string>());
    if (pct < 0 || pct > 100 || !price) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("curve[{}]: utilisation 0..100 and a decimal price", i));
    }
    curve.push_back({.utilisation_pct = static_cast<int>(pct), .gpu_hour_micros = price->micros()});
  }
  return curve;
}

json rule_json(const State& state, const SpotRule& rule, TimeMs now_ms) {
  json curve = json::array();
  for (const CurvePoint& p : rule.curve) {
    curve.push_back(
        {{"utilisation_pct", p.utilisation_pct}, {"gpu_hour", decimal(p.gpu_hour_micros)}});
  }
  const meter::PriceKey key{
      .model = rule.model, .region = rule.region, .price_class = PriceClass::kSpot};
  const meter::Price* now = state.prices.at(key, now_ms);
  json history = json::array();
  if (auto prices = state.prices.prices().find(key); prices != state.prices.prices().end()) {
    const auto& by_time = prices->second;
    auto from = by_time.begin();
    if (by_time.size() > kHistoryShown) std::advance(from, by_time.size() - kHistoryShown);
    for (auto it = from; it != by_time.end(); ++it) {
      history.push_back({{"effective_at", format_time(it->first)},
                         {"gpu_hour", decimal(it->second.gpu_hour_micros)}});
    }
  }
  const int64_t permille = gpu_utilisation_permille(state, rule.model, rule.region);
  return {{"gpu_model", rule.model},
          {"region", rule.region},
          {"curve", std::move(curve)},
          {"interval_s", rule.interval_ms / 1000},
          {"created_at", format_time(rule.created_at_ms)},
          {"last_priced_at",
           rule.last_priced_ms == 0 ? json(nullptr) : json(format_time(rule.last_priced_ms))},
          {"utilisation_pct", fmt::format("{}.{}", permille / 10, permille % 10)},
          {"curve_price_now", decimal(price_on_curve(rule.curve, permille))},
          {"spot_price_now", now == nullptr ? json(nullptr) : json(decimal(now->gpu_hour_micros))},
          {"history", std::move(history)}};
}

// PUT /v1/spot-rules {"gpu_model", "region", "curve", "interval_s"?}: sets or replaces the rule.
Result<HttpResponse> set_rule(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  SpotRule rule{.model = body.required_string("gpu_model"),
                .region = body.required_string("region")};
  const json points = body.optional_json("curve");
  const auto interval_s = body.optional_int("interval_s", limits::kMinSpotIntervalMs / 1000,
                                            limits::kMaxSpotIntervalMs / 1000);
  ALLOT_TRY(body.finish());
  if (points.is_null()) return fail(ErrorCode::kMissingField, "'curve' is required");
  ALLOT_TRY_ASSIGN(rule.curve, read_curve(points));
  if (interval_s) rule.interval_ms = *interval_s * 1000;
  call.target_id = rule.key();
  ALLOT_TRY(call.ctx.apply(SetSpotRule{.rule = rule}));
  const State& state = call.ctx.state();
  return json_reply(200, rule_json(state, state.spot_rules.at(rule.key()), call.ctx.now_ms()));
}

Result<HttpResponse> list_rules(Call& call) {
  ALLOT_TRY(read_page(call.target, {}));
  json items = json::array();
  const State& state = call.ctx.state();
  for (const auto& [key, rule] : state.spot_rules) {
    items.push_back(rule_json(state, rule, call.ctx.now_ms()));
  }
  return json_reply(200, {{"items", std::move(items)}, {"next_after", nullptr}});
}

Result<HttpResponse> delete_rule(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const DeleteSpotRule command{.model = call.params.at(0), .region = call.params.at(1)};
  call.target_id = command.model + "/" + command.region;
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, {{"gpu_model", command.model}, {"region", command.region}});
}

constexpr Resource kResources[] = {
    {.path = "/v1/spot-rules",
     .put = set_rule,
     .list = list_rules,
     .remove = delete_rule,
     .item = "/{model}/{region}"},
};

}  // namespace

std::span<const Route> spot_routes() { return route_table<kResources>(); }

}  // namespace allot
