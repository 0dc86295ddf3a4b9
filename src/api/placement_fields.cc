#include "api/placement_fields.h"

#include <cstdint>

#include <fmt/format.h>

#include "common/money.h"
#include "core/kernel/gpu_models.h"

namespace allot {

PlacementFields read_placement_fields(JsonBody& body) {
  return PlacementFields{.gpus = body.optional_int("gpus", INT32_MIN, INT32_MAX),
                         .gpu_milli = body.optional_int("gpu_milli", INT32_MIN, INT32_MAX),
                         .gpu_models = body.optional_strings("gpu_models"),
                         .price_class = body.optional_string("price_class"),
                         .max_price = body.optional_string("max_price"),
                         .regions = body.optional_strings("regions"),
                         .prefer = body.optional_string("prefer"),
                         .from = body.optional_string("from")};
}

Status apply_placement_fields(const PlacementFields& f, InstanceSpec& spec) {
  spec.gpus = static_cast<int>(f.gpus.value_or(f.gpu_milli ? 0 : 1));
  spec.gpu_milli = static_cast<int>(f.gpu_milli.value_or(0));
  spec.gpu_models = f.gpu_models.value_or(std::vector<std::string>{});
  // A model is named as Allot spells it, so "h100" asks for what "H100" does; one it does not know
  // is left as given for check_gpu_request to refuse with a suggestion.
  for (std::string& model : spec.gpu_models) {
    if (auto known = canonical_gpu_model(model)) model = std::move(*known);
  }
  spec.regions = f.regions.value_or(std::vector<std::string>{});
  spec.from = f.from.value_or("");
  if (f.price_class) {
    auto parsed = parse_price_class(*f.price_class);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument, "price_class must be on-demand, spot or reserved");
    }
    spec.price_class = *parsed;
  }
  if (f.prefer) {
    auto parsed = parse_prefer(*f.prefer);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("unknown prefer '{}': price, carbon or latency", *f.prefer));
    }
    spec.prefer = *parsed;
  }
  if (f.max_price) {
    auto money = Money::parse(*f.max_price);
    if (!money) {
      return fail(money.error().code,
                  fmt::format("'max_price' must be a decimal amount per GPU-hour like \"1.50\": {}",
                              money.error().message));
    }
    spec.max_price_micros = money->micros();
  }
  return {};
}

}  // namespace allot
