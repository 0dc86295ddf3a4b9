// Pre-pulls as JSON documents: how the store keeps them (one document per pull).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/image.h"

namespace allot {

nlohmann::json image_pull_document(const ImagePull& pull);
[[nodiscard]] Result<ImagePull> image_pull_from_document(const nlohmann::json& doc);

}  // namespace allot
