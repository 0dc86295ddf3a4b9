#include "store/spot_rule_json.h"

#include "common/document.h"

namespace allot {

using nlohmann::json;

// A curve's point is kept as the pair [utilisation %, micros per GPU-hour].
static void to_json(json& doc, const CurvePoint& p) {
  doc = {p.utilisation_pct, p.gpu_hour_micros};
}
static void from_json(const json& doc, CurvePoint& p) {
  p = {.utilisation_pct = doc.at(0), .gpu_hour_micros = doc.at(1)};
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SpotRule, model, region, curve, interval_ms, created_at_ms,
                                   last_priced_ms)

json spot_rule_document(const SpotRule& r) { return r; }

Result<SpotRule> spot_rule_from_document(const json& d) {
  return from_document<SpotRule>(d, "spot price rule");
}

}  // namespace allot
