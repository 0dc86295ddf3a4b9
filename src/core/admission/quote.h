// Ranking the places a request could run: by price, by the grid's carbon, or by latency from a
// client location, after the request's hard limits (a maximum price, allowed regions) have left
// out what they exclude. `allot quote` shows the ranking; the scheduler's preference plugin
// orders regions by the same function, so that what is quoted is what runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/model/cluster.h"

namespace allot {

// One region and GPU model where a request could run, with what running it there would mean.
struct QuoteOption {
  std::string region;
  std::string gpu_model;
  bool fits = false;  // One node has room for the request now.
  int free_gpus = 0;  // The most wholly free GPUs of the model on one node that takes work.
  // The price of the request's class per GPU-hour, and for the whole request per hour; unset
  // where no price is in force (such time is not charged).
  std::optional<int64_t> price_micros_per_gpu_hour;
  std::optional<int64_t> price_micros_per_hour;
  // Milligrams of CO2e per hour: the GPUs' busy power x the site's PUE x the grid's intensity;
  // unset where the region's intensity is not known.
  std::optional<int64_t> carbon_mg_per_hour;
  std::optional<int64_t> latency_ms;  // From the request's `from`; unset where none is known.

  bool operator==(const QuoteOption&) const = default;
};

struct RankedOption {
  QuoteOption option;
  int rank = 0;     // 1 is the best; options with no room now come after those that fit.
  std::string why;  // E.g. "cheapest: 2.400000/h, 0.600000 below next".
};

struct ExcludedOption {
  QuoteOption option;
  std::string reason;  // E.g. "over max price 3.000000", "not in allowed regions".
};

struct Quote {
  Prefer prefer = Prefer::kPrice;
  std::vector<RankedOption> ranked;
  std::vector<ExcludedOption> excluded;
};

// What a request asks of where it runs: the preference (kNone ranks by price), the client
// location for latency, the hard maximum price per GPU-hour (0: none), and the allowed regions
// (empty: any).
struct RegionWishes {
  Prefer prefer = Prefer::kNone;
  std::string from;
  int64_t max_price_micros = 0;
  std::vector<std::string> regions;
  PriceClass price_class = PriceClass::kOnDemand;  // Only where a price of it is charged.
};

RegionWishes wishes_of(const InstanceSpec& spec);

// A region's name as a request or the latency table may give it: a name (core/kernel/validate.h)
// with no commas or spaces, so that lists of regions read unambiguously.
[[nodiscard]] Status check_region_name(const std::string& region);

// Refuses (kInvalidArgument, or kLimitExceeded for too many regions) a preference for latency
// without a location, a location without that preference, a negative or huge maximum price, an
// empty or malformed region name, a region named twice, and more than
// limits::kMaxAllowedRegions regions.
[[nodiscard]] Status check_wishes(const RegionWishes& wishes);

// Leaves out what the hard limits exclude (a region not allowed, then a price over the maximum,
// then, preferring latency, a region with no latency known from `from`), and ranks the rest:
// those that fit before those that do not, then by the preferred measure (known before unknown,
// lower first), then by price (known before unknown), then by region and model name. Pure and
// deterministic: the same options in any order give the same quote.
Quote rank_quote(std::vector<QuoteOption> options, const RegionWishes& wishes);

}  // namespace allot
