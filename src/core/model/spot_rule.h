// The spot price rule: the spot price of one GPU model in one region follows the utilisation of
// that model's GPUs there, along a curve the operator sets. Each change is an ordinary
// effective-dated spot price in the catalog, so its history is the catalog's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"

namespace allot {

// At `utilisation_pct` percent of the GPUs allocated, the spot price is `gpu_hour_micros` per
// GPU-hour; between two points it is interpolated linearly.
struct CurvePoint {
  int utilisation_pct = 0;
  int64_t gpu_hour_micros = 0;

  bool operator==(const CurvePoint&) const = default;
};

struct SpotRule {
  std::string model;   // A catalog GPU model.
  std::string region;  // A region name.
  // Utilisation strictly ascending, the first at 0 % and the last at 100 %.
  std::vector<CurvePoint> curve;
  int64_t interval_ms = 300'000;  // The price is looked at again this often.
  TimeMs created_at_ms = 0;
  TimeMs last_priced_ms = 0;  // When the rule last looked; 0: never.

  bool operator==(const SpotRule&) const = default;
  std::string key() const { return model + "/" + region; }
};

// The price on the curve at `utilisation_permille` (0..1000), rounded down to the micro-unit.
int64_t price_on_curve(const std::vector<CurvePoint>& curve, int64_t utilisation_permille);

}  // namespace allot
