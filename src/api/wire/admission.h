// The wire forms of admission's objects: quotas, reservations, prices.
#pragma once

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "core/model/rules.h"
#include "meter/rating.h"

namespace allot {

nlohmann::json to_json(const Quota& quota);
nlohmann::json to_json(const Reservation& reservation);
// A price with its rates as decimal strings, and whether it is the one in force at `at_ms`.
nlohmann::json to_json(const meter::Price& price, TimeMs at_ms);

}  // namespace allot
