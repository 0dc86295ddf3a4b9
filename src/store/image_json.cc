#include "store/image_json.h"

#include "common/document.h"

namespace allot {

using nlohmann::json;

static void to_json(json& doc, PullState state) { doc = pull_state_name(state); }
static void from_json(const json& doc, PullState& state) {
  read_name(doc, state, parse_pull_state);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PullTarget, node_id, state, message, ended_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ImagePull, id, image, pool, tenant_id, created_at_ms, targets)

json image_pull_document(const ImagePull& pull) { return pull; }

Result<ImagePull> image_pull_from_document(const json& d) {
  return from_document<ImagePull>(d, "pull");
}

}  // namespace allot
