// Spot price rules as JSON documents: how the store keeps them (one document per row).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/spot_rule.h"

namespace allot {

nlohmann::json spot_rule_document(const SpotRule& rule);
[[nodiscard]] Result<SpotRule> spot_rule_from_document(const nlohmann::json& doc);

}  // namespace allot
