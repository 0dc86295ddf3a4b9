#include "store/spot_rule_json.h"

namespace allot {

using nlohmann::json;

json spot_rule_document(const SpotRule& r) {
  json curve = json::array();
  for (const CurvePoint& p : r.curve) curve.push_back({p.utilisation_pct, p.gpu_hour_micros});
  return {{"model", r.model},
          {"region", r.region},
          {"curve", std::move(curve)},
          {"interval_ms", r.interval_ms},
          {"created_at_ms", r.created_at_ms},
          {"last_priced_ms", r.last_priced_ms}};
}

Result<SpotRule> spot_rule_from_document(const json& d) {
  try {
    SpotRule rule{.model = d.at("model"),
                  .region = d.at("region"),
                  .interval_ms = d.at("interval_ms"),
                  .created_at_ms = d.at("created_at_ms"),
                  .last_priced_ms = d.at("last_priced_ms")};
    const json& curve = d.at("curve");
    rule.curve.reserve(curve.size());
    for (const json& point : curve) {
      rule.curve.push_back({.utilisation_pct = point.at(0), .gpu_hour_micros = point.at(1)});
    }
    return rule;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal,
                std::string("a stored spot price rule is unreadable: ") + e.what());
  }
}

}  // namespace allot
