// Images on container nodes, for operator admins: what each node holds and how full its image
// store is, and pre-pulls that put an image on every node of a pool before work needs it.
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "core/cluster/image_pulls.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

using nlohmann::json;

// "pool" or "node" filters: a node matches a pool by its label pool=NAME.
bool node_matches(const Node& node, const Target& target) {
  const auto pool = target.query.find("pool");
  if (pool != target.query.end()) {
    const auto label = node.labels.find("pool");
    if (label == node.labels.end() || label->second != pool->second) return false;
  }
  const auto named = target.query.find("node");
  return named == target.query.end() || named->second == node.name || named->second == node.id;
}

json node_images_json(const Node& node) {
  json images = json::array();
  int64_t used = 0;
  for (const NodeImage& image : node.images) {
    images.push_back({{"id", image.id},
                      {"names", image.names},
                      {"size_bytes", image.size_bytes},
                      {"created_at", format_time(image.created_at_ms)}});
    used += image.size_bytes;
  }
  return {{"node_id", node.id},
          {"node", node.name},
          {"pool", node.labels.contains("pool") ? json(node.labels.at("pool")) : json(nullptr)},
          {"images", images},
          {"images_bytes", used},
          {"store_total_bytes", node.image_store.total_bytes},
          {"store_free_bytes", node.image_store.free_bytes},
          {"reported_at", time_or_null(node.images_at_ms)}};
}

json pull_json(const State& state, const ImagePull& pull) {
  json targets = json::array();
  std::map<std::string, int> counts;
  for (const PullTarget& t : pull.targets) {
    const Node* node = state.node(t.node_id);
    targets.push_back({{"node_id", t.node_id},
                       {"node", node != nullptr ? node->name : ""},
                       {"state", pull_state_name(t.state)},
                       {"message", t.message},
                       {"ended_at", time_or_null(t.ended_at_ms)}});
    ++counts[std::string(pull_state_name(t.state))];
  }
  return {{"id", pull.id},
          {"image", pull.image},
          {"pool", pull.pool.empty() ? json(nullptr) : json(pull.pool)},
          {"created_at", format_time(pull.created_at_ms)},
          {"finished", pull.finished()},
          {"counts", counts},
          {"nodes", targets}};
}

// GET /v1/images[?pool=NAME][&node=NAME|ID]: each container node's images and image store.
Result<HttpResponse> list_images(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"pool", "node"}));
  return page_of(
      call.ctx.state().nodes, page,
      [&](const Node& n) {
        return n.runtime == "container" && n.deleted_at_ms == 0 && node_matches(n, call.target);
      },
      node_images_json);
}

// POST /v1/images/pulls {"image"[, "pool"]}: every ready container node of the pool (all of them
// without one) pulls the image, with the operator tenant's registry credential for its registry.
Result<HttpResponse> create_pull(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  const std::string image = body.required_string("image");
  const std::string pool = body.optional_string("pool").value_or("");
  ALLOT_TRY(body.finish());
  const std::string id = call.ctx.ids().new_id("ipl");
  ALLOT_TRY(call.ctx.apply(RequestImagePull{
      .id = id, .image = image, .pool = pool, .tenant_id = call.caller.tenant_id}));
  call.target_id = id;
  return json_reply(202, pull_json(call.ctx.state(), *call.ctx.state().image_pull(id)));
}

// GET /v1/images/pulls: the newest first.
Result<HttpResponse> list_pulls(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  return page_of(
      call.ctx.state().image_pulls, page, [](const ImagePull&) { return true; },
      [&](const ImagePull& p) { return pull_json(call.ctx.state(), p); });
}

Result<HttpResponse> get_pull(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("pull id", id, "ipl"));
  const ImagePull* pull = call.ctx.state().image_pull(id);
  if (pull == nullptr) return fail(ErrorCode::kNotFound, "no image pull " + id);
  return json_reply(200, pull_json(call.ctx.state(), *pull));
}

constexpr Resource kResources[] = {
    {.path = "/v1/images", .list = list_images},
    {.path = "/v1/images/pulls", .create = create_pull, .list = list_pulls, .get = get_pull},
};

}  // namespace

std::span<const Route> image_routes() { return route_table<kResources>(); }

}  // namespace allot
