// Volumes as JSON documents: how the store keeps them, one document per row.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/volume.h"

namespace allot {

nlohmann::json volume_document(const Volume& volume);
[[nodiscard]] Result<Volume> volume_from_document(const nlohmann::json& doc);

}  // namespace allot
