// Latency table entries as JSON documents: how the store keeps them (one document per row).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/latency.h"

namespace allot {

nlohmann::json latency_document(const Latency& latency);
[[nodiscard]] Result<Latency> latency_from_document(const nlohmann::json& doc);

}  // namespace allot
