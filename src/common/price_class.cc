#include "common/price_class.h"

namespace allot {

std::string_view price_class_name(PriceClass price_class) {
  switch (price_class) {
    case PriceClass::kOnDemand:
      return "on-demand";
    case PriceClass::kSpot:
      return "spot";
    case PriceClass::kReserved:
      return "reserved";
  }
  return "on-demand";
}

std::optional<PriceClass> parse_price_class(std::string_view name) {
  for (PriceClass c : {PriceClass::kOnDemand, PriceClass::kSpot, PriceClass::kReserved}) {
    if (price_class_name(c) == name) return c;
  }
  return std::nullopt;
}

}  // namespace allot
