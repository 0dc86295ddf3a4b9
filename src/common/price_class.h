// How work is sold: on demand, as spot (cheaper, preemptible), or on a reservation.
#pragma once

#include <optional>
#include <string_view>

namespace allot {

enum class PriceClass { kOnDemand, kSpot, kReserved };

// "on-demand", "spot", "reserved".
std::string_view price_class_name(PriceClass price_class);
std::optional<PriceClass> parse_price_class(std::string_view name);

}  // namespace allot
