#include "store/volume_json.h"

#include "common/document.h"

namespace allot {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Volume, id, tenant_id, project_id, name, region,
                                                backend, size_gb, node_id, created_at_ms,
                                                deleted_at_ms, billed_micros, billed_to_ms,
                                                postings, settled)

nlohmann::json volume_document(const Volume& v) { return v; }

Result<Volume> volume_from_document(const nlohmann::json& d) {
  return from_document<Volume>(d, "volume");
}

}  // namespace allot
