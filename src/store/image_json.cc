#include "store/image_json.h"

namespace allot {

using nlohmann::json;

json image_pull_document(const ImagePull& pull) {
  json targets = json::array();
  for (const PullTarget& t : pull.targets) {
    targets.push_back({{"node_id", t.node_id},
                       {"state", pull_state_name(t.state)},
                       {"message", t.message},
                       {"ended_at_ms", t.ended_at_ms}});
  }
  return {{"id", pull.id},
          {"image", pull.image},
          {"pool", pull.pool},
          {"tenant_id", pull.tenant_id},
          {"created_at_ms", pull.created_at_ms},
          {"targets", targets}};
}

Result<ImagePull> image_pull_from_document(const json& d) {
  try {
    ImagePull pull{.id = d.at("id"),
                   .image = d.at("image"),
                   .pool = d.at("pool"),
                   .tenant_id = d.at("tenant_id"),
                   .created_at_ms = d.at("created_at_ms")};
    for (const json& t : d.at("targets")) {
      const std::string state = t.at("state");
      PullTarget target{.node_id = t.at("node_id"),
                        .message = t.at("message"),
                        .ended_at_ms = t.at("ended_at_ms")};
      const auto parsed = parse_pull_state(state);
      if (!parsed) return fail(ErrorCode::kInternal, "a stored pull has the state " + state);
      target.state = *parsed;
      pull.targets.push_back(std::move(target));
    }
    return pull;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored pull is malformed: ") + e.what());
  }
}

}  // namespace allot
