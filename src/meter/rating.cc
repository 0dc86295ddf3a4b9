#include "meter/rating.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace allot::meter {
namespace {

constexpr int64_t kMilliSecondsPerHour = 3'600'000;  // 1000 milli x 3600 s.
constexpr int64_t kMibSecondsPerGibHour = int64_t{1024} * 3600;

// floor(rate * amount * seconds / divisor) for non-negative inputs, in 128 bits.
Result<int64_t> scaled(int64_t rate, int64_t amount, int64_t seconds, int64_t divisor) {
  if (rate < 0 || amount < 0 || seconds < 0) {
    return fail(ErrorCode::kInvalidArgument, "rates, amounts and seconds must be >= 0");
  }
  Int128 product = 0;
  if (__builtin_mul_overflow(static_cast<Int128>(rate) * amount, seconds, &product)) {
    return fail(ErrorCode::kOverflow, "the charge leaves the int64 range");
  }
  const Int128 charge = product / divisor;
  if (charge > INT64_MAX) return fail(ErrorCode::kOverflow, "the charge leaves the int64 range");
  return static_cast<int64_t>(charge);
}

}  // namespace

Result<int64_t> stretch_charge(int64_t rate_micros_per_gpu_hour, int64_t milli, int64_t seconds) {
  return scaled(rate_micros_per_gpu_hour, milli, seconds, kMilliSecondsPerHour);
}

PriceKey storage_key(const std::string& region) {
  return PriceKey{.model = std::string(kStorageModel), .region = region};
}

Status PriceCatalog::add(const Price& price, TimeMs now_ms) {
  if (price.key.model.empty() || price.key.region.empty()) {
    return fail(ErrorCode::kInvalidArgument, "a price needs a GPU model and a region");
  }
  if (price.gpu_hour_micros < 0 || price.cpu_hour_micros < 0 || price.memory_gib_hour_micros < 0 ||
      price.storage_gb_month_micros < 0) {
    return fail(ErrorCode::kInvalidArgument, "a rate cannot be negative");
  }
  const bool gpu_rates =
      price.gpu_hour_micros != 0 || price.cpu_hour_micros != 0 || price.memory_gib_hour_micros != 0;
  if (price.key.storage() && (gpu_rates || price.key.price_class != PriceClass::kOnDemand)) {
    return fail(ErrorCode::kInvalidArgument,
                "a storage price has only a rate per GB-month, in no price class");
  }
  if (!price.key.storage() && price.storage_gb_month_micros != 0) {
    return fail(ErrorCode::kInvalidArgument, "only a storage price has a rate per GB-month");
  }
  if (price.effective_ms < now_ms) {
    return fail(ErrorCode::kInvalidArgument,
                "a price change applies from now or later, never backwards");
  }
  auto& by_time = table(price.key)[price.key];
  if (by_time.contains(price.effective_ms)) {
    return fail(ErrorCode::kAlreadyExists, "a price for that key takes effect at that time");
  }
  by_time.emplace(price.effective_ms, price);
  return {};
}

const Price* PriceCatalog::at(const PriceKey& key, TimeMs at_ms) const {
  const Table& prices = table(key);
  auto by_time = prices.find(key);
  if (by_time == prices.end()) return nullptr;
  auto it = by_time->second.upper_bound(at_ms);
  if (it == by_time->second.begin()) return nullptr;
  return &std::prev(it)->second;
}

std::vector<Stretch> PriceCatalog::stretches(const PriceKey& key, int64_t start_s,
                                             int64_t end_s) const {
  std::vector<Stretch> out;
  const Table& prices = table(key);
  auto by_time = prices.find(key);
  if (by_time == prices.end() || end_s <= start_s) return out;
  const auto& changes = by_time->second;
  // `next` is always the first change after second `at` began; a change inside a second applies
  // from the next whole second.
  auto next = changes.upper_bound(start_s * 1000);
  const Price* current = next == changes.begin() ? nullptr : &std::prev(next)->second;
  for (int64_t at = start_s; at < end_s;) {
    const int64_t until =
        next == changes.end() ? end_s : std::min(end_s, (next->first + 999) / 1000);
    if (current != nullptr) out.push_back(Stretch{.start_s = at, .end_s = until, .price = current});
    while (next != changes.end() && next->first <= until * 1000) current = &(next++)->second;
    at = until;
  }
  return out;
}

const Price* PriceCatalog::charged(const PriceKey& key, TimeMs at_ms) const {
  const Price* own = at(key, at_ms);
  if (own != nullptr || !spot_falls_back_ || key.price_class != PriceClass::kSpot) return own;
  return at(
      PriceKey{.model = key.model, .region = key.region, .price_class = PriceClass::kOnDemand},
      at_ms);
}

std::vector<Stretch> PriceCatalog::charged_stretches(const PriceKey& key, int64_t start_s,
                                                     int64_t end_s) const {
  std::vector<Stretch> own = stretches(key, start_s, end_s);
  if (!spot_falls_back_ || key.price_class != PriceClass::kSpot) return own;
  const PriceKey on_demand{
      .model = key.model, .region = key.region, .price_class = PriceClass::kOnDemand};
  std::vector<Stretch> out;
  int64_t covered_to = start_s;  // Seconds before this are in `out` or priced by neither.
  auto fill_to = [&](int64_t until_s) {
    if (covered_to < until_s)
      std::ranges::move(stretches(on_demand, covered_to, until_s), std::back_inserter(out));
  };
  for (const Stretch& s : own) {
    fill_to(s.start_s);
    out.push_back(s);
    covered_to = s.end_s;
  }
  fill_to(end_s);
  return out;
}

Result<int64_t> usage_charge(const PriceCatalog& catalog, const PriceKey& key, int64_t milli,
                             int64_t cpu_milli, int64_t memory_mib, int64_t start_s,
                             int64_t end_s) {
  return stretches_charge(catalog.charged_stretches(key, start_s, end_s), milli, cpu_milli,
                          memory_mib);
}

Result<int64_t> storage_charge(const std::vector<Stretch>& stretches, int64_t gb) {
  int64_t total = 0;
  for (const Stretch& s : stretches) {
    auto part =
        scaled(s.price->storage_gb_month_micros, gb, s.end_s - s.start_s, kSecondsPerStorageMonth);
    if (!part) return part;
    if (__builtin_add_overflow(total, *part, &total)) {
      return fail(ErrorCode::kOverflow, "the charge leaves the int64 range");
    }
  }
  return total;
}

Result<int64_t> stretches_charge(const std::vector<Stretch>& stretches, int64_t milli,
                                 int64_t cpu_milli, int64_t memory_mib) {
  int64_t total = 0;
  for (const Stretch& s : stretches) {
    const int64_t seconds = s.end_s - s.start_s;
    auto gpu = stretch_charge(s.price->gpu_hour_micros, milli, seconds);
    if (!gpu) return gpu;
    auto cpu = scaled(s.price->cpu_hour_micros, cpu_milli, seconds, kMilliSecondsPerHour);
    if (!cpu) return cpu;
    auto memory =
        scaled(s.price->memory_gib_hour_micros, memory_mib, seconds, kMibSecondsPerGibHour);
    if (!memory) return memory;
    for (int64_t part : {*gpu, *cpu, *memory}) {
      if (__builtin_add_overflow(total, part, &total)) {
        return fail(ErrorCode::kOverflow, "the charge leaves the int64 range");
      }
    }
  }
  return total;
}

}  // namespace allot::meter
