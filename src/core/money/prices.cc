// The price catalog: the operator sets rates per GPU model x region x price class, and storage
// rates per region, effective from a moment on.
#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/validate.h"
#include "core/money/money.h"

namespace allot {

Result<Rows> apply(const State& state, const SetPrice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  meter::Price price = c.price;
  if (price.effective_ms == 0) price.effective_ms = now_ms;
  if (!price.key.storage() && !is_catalog_gpu_model(price.key.model)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a price needs a GPU model of the catalog, e.g. H100-80GB; not '{}'",
                            price.key.model));
  }
  if (auto ok = check_name("region", price.key.region); !ok) return std::unexpected(ok.error());
  // Volumes live only in regions of plain names: a storage price elsewhere would never apply.
  if (price.key.storage() && !is_plain_name(price.key.region, limits::kMaxVolumeName)) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("a storage price's region is a region's name, as volumes have; not '{}'",
                    price.key.region.substr(0, 64)));
  }
  // The catalog's own checks (rates, never backwards, one price per key and moment), on a copy.
  meter::PriceCatalog probe;
  const auto& table = price.key.storage() ? state.prices.storage_prices() : state.prices.prices();
  if (auto by_key = table.find(price.key);
      by_key != table.end() && by_key->second.contains(price.effective_ms)) {
    return fail(ErrorCode::kAlreadyExists, "a price for that key takes effect at that moment");
  }
  if (auto ok = probe.add(price, now_ms); !ok) return std::unexpected(ok.error());
  return Rows{price};
}

void put(State& state, const meter::Price& price) { state.prices.restore(price); }

}  // namespace allot
