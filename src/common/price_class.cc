#include "common/price_class.h"

#include "common/enum_names.h"

namespace allot {

constexpr EnumNames<PriceClass, 3> kPriceClassNames{{"on-demand", "spot", "reserved"}};

std::string_view price_class_name(PriceClass price_class) {
  return kPriceClassNames.name(price_class, "on-demand");
}

std::optional<PriceClass> parse_price_class(std::string_view name) {
  return kPriceClassNames.parse(name);
}

}  // namespace allot
