#include "store/registry_json.h"

#include "common/document.h"

namespace allot {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RegistryCredential, tenant_id, host, username, sealed_password,
                                   updated_at_ms, deleted_at_ms)

nlohmann::json registry_credential_document(const RegistryCredential& c) { return c; }

Result<RegistryCredential> registry_credential_from_document(const nlohmann::json& d) {
  return from_document<RegistryCredential>(d, "registry credential");
}

}  // namespace allot
