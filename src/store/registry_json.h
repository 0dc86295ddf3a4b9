// Registry credentials as JSON documents: how the store keeps them (one document per row; the
// password only sealed).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/registry.h"

namespace allot {

nlohmann::json registry_credential_document(const RegistryCredential& credential);
[[nodiscard]] Result<RegistryCredential> registry_credential_from_document(
    const nlohmann::json& doc);

}  // namespace allot
