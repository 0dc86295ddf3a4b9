// The price catalog: the operator sets rates per GPU model x region x price class, effective from
// a moment on.
#include <fmt/format.h>

#include "core/kernel/gpu_models.h"
#include "core/kernel/validate.h"
#include "core/money/money.h"

namespace allot {

Result<Rows> apply(const State& state, const SetPrice& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  meter::Price price = c.price;
  if (price.effective_ms == 0) price.effective_ms = now_ms;
  if (!is_catalog_gpu_model(price.key.model)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a price needs a GPU model of the catalog, e.g. H100-80GB; not '{}'",
                            price.key.model));
  }
  if (auto ok = check_name("region", price.key.region); !ok) return std::unexpected(ok.error());
  // The catalog's own checks (rates, never backwards, one price per key and moment), on a copy.
  meter::PriceCatalog probe;
  if (auto by_key = state.prices.prices().find(price.key);
      by_key != state.prices.prices().end() && by_key->second.contains(price.effective_ms)) {
    return fail(ErrorCode::kAlreadyExists, "a price for that key takes effect at that moment");
  }
  if (auto ok = probe.add(price, now_ms); !ok) return std::unexpected(ok.error());
  return Rows{price};
}

void put(State& state, const meter::Price& price) { state.prices.restore(price); }

}  // namespace allot
