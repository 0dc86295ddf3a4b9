// Rating: what a stretch of GPU use costs, exactly, and the price catalog it is rated against.
//
// The charge rule: an instance holding `milli` GPU milli (1000 per whole GPU) for `seconds` at a
// rate of `rate` micro-units per GPU-hour owes floor(rate * milli * seconds / 3,600,000). It is
// computed cumulatively from the start of a stretch of constant rate, so rating a stretch every
// minute (charging the difference each time) or once gives the same total. A new stretch starts at
// each price change.
//
// Storage is priced per GB-month of a volume's provisioned size, a month being 730 hours: a volume
// of `gb` GB owes floor(rate * gb * seconds / 2,628,000), from each stretch's start in the same
// way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "common/int128.h"
#include "common/price_class.h"

namespace allot::meter {

// The charge for `seconds` of a stretch from its start. Fails with kInvalidArgument on negative
// inputs and kOverflow when the charge leaves int64.
[[nodiscard]] Result<int64_t> stretch_charge(int64_t rate_micros_per_gpu_hour, int64_t milli,
                                             int64_t seconds);

// The model of a storage price's key: a region's price per GB-month of volumes.
inline constexpr std::string_view kStorageModel = "storage";
inline constexpr int64_t kSecondsPerStorageMonth = int64_t{730} * 3600;

struct PriceKey {
  std::string model;   // A catalog GPU model, e.g. "H100-80GB", or kStorageModel.
  std::string region;  // A region name.
  PriceClass price_class = PriceClass::kOnDemand;

  auto operator<=>(const PriceKey&) const = default;
  bool storage() const { return model == kStorageModel; }
};

// The key of a region's storage price.
PriceKey storage_key(const std::string& region);

struct Price {
  PriceKey key;
  TimeMs effective_ms = 0;  // From this moment on.
  int64_t gpu_hour_micros = 0;
  int64_t cpu_hour_micros = 0;          // Per CPU (1000 milli) hour; 0: CPU is not charged.
  int64_t memory_gib_hour_micros = 0;   // Per GiB hour; 0: memory is not charged.
  int64_t storage_gb_month_micros = 0;  // Storage keys only: per GB-month of volumes.

  bool operator==(const Price&) const = default;
};

// One stretch of constant price within an interval, in whole seconds.
struct Stretch {
  int64_t start_s = 0;
  int64_t end_s = 0;
  const Price* price = nullptr;
};

// Effective-dated prices: a change applies from its effective time on, never backwards.
class PriceCatalog {
 public:
  // Adds a price. Refused: no model or region, a negative rate, a GPU rate on a storage key or a
  // storage rate on a GPU key, an effective time before `now_ms` (a change never applies
  // backwards), or a second price for the same key and time.
  [[nodiscard]] Status add(const Price& price, TimeMs now_ms);

  // Puts back a price loaded from the store, without the checks of add().
  void restore(const Price& price) { table(price.key)[price.key][price.effective_ms] = price; }

  // The price in force for `key` at `at_ms`, or null.
  const Price* at(const PriceKey& key, TimeMs at_ms) const;

  // [start_s, end_s) cut where the price for `key` changes. Seconds with no price in force are
  // left out (they are not charged; the caller decides whether that is an error).
  std::vector<Stretch> stretches(const PriceKey& key, int64_t start_s, int64_t end_s) const;

  // The GPU prices, by key then time. Storage prices are kept apart, so that what walks the GPU
  // prices never meets one.
  const std::map<PriceKey, std::map<TimeMs, Price>>& prices() const { return prices_; }
  const std::map<PriceKey, std::map<TimeMs, Price>>& storage_prices() const { return storage_; }

  // The operator's choice (allotd's `spot_fallback = "on-demand"`): spot work where no spot price
  // is in force is charged the on-demand price of its model and region. Off by default: such work
  // has no price, and unpriced work is not placed.
  void set_spot_falls_back(bool on) { spot_falls_back_ = on; }
  bool spot_falls_back() const { return spot_falls_back_; }

  // The price that work under `key` is charged at `at_ms`: at(), or for spot work with no spot
  // price in force and the fallback on, the on-demand price. Null: the work has no price.
  const Price* charged(const PriceKey& key, TimeMs at_ms) const;

  // stretches() as charged(): with the fallback on, the seconds of a spot key that no spot price
  // covers are cut by the on-demand price.
  std::vector<Stretch> charged_stretches(const PriceKey& key, int64_t start_s, int64_t end_s) const;

 private:
  using Table = std::map<PriceKey, std::map<TimeMs, Price>>;
  Table& table(const PriceKey& key) { return key.storage() ? storage_ : prices_; }
  const Table& table(const PriceKey& key) const { return key.storage() ? storage_ : prices_; }

  Table prices_;
  Table storage_;
  bool spot_falls_back_ = false;
};

// What `milli` GPU milli, `cpu_milli` CPU and `memory_mib` memory owe over these stretches: each
// rated from its own start.
[[nodiscard]] Result<int64_t> stretches_charge(const std::vector<Stretch>& stretches, int64_t milli,
                                               int64_t cpu_milli, int64_t memory_mib);

// What `gb` GB of storage owes over these stretches of storage prices: each rated from its start.
[[nodiscard]] Result<int64_t> storage_charge(const std::vector<Stretch>& stretches, int64_t gb);

// What an instance owes for running from start_s to end_s (whole seconds) with `milli` GPU milli,
// `cpu_milli` CPU and `memory_mib` memory: each charged stretch rated from its own start.
[[nodiscard]] Result<int64_t> usage_charge(const PriceCatalog& catalog, const PriceKey& key,
                                           int64_t milli, int64_t cpu_milli, int64_t memory_mib,
                                           int64_t start_s, int64_t end_s);

}  // namespace allot::meter
