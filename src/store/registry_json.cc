#include "store/registry_json.h"

namespace allot {

using nlohmann::json;

json registry_credential_document(const RegistryCredential& c) {
  return {{"tenant_id", c.tenant_id},         {"host", c.host},
          {"username", c.username},           {"sealed_password", c.sealed_password},
          {"updated_at_ms", c.updated_at_ms}, {"deleted_at_ms", c.deleted_at_ms}};
}

Result<RegistryCredential> registry_credential_from_document(const json& d) {
  try {
    return RegistryCredential{.tenant_id = d.at("tenant_id"),
                              .host = d.at("host"),
                              .username = d.at("username"),
                              .sealed_password = d.at("sealed_password"),
                              .updated_at_ms = d.at("updated_at_ms"),
                              .deleted_at_ms = d.at("deleted_at_ms")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal,
                std::string("a stored registry credential is malformed: ") + e.what());
  }
}

}  // namespace allot
