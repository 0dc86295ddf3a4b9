// Join tokens and nodes, for operator admins.
#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "api/wire/cluster.h"
#include "api/wire/identity.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

using nlohmann::json;

constexpr std::string_view kTrueFalseNames[] = {"true", "false"};
constexpr std::span<const std::string_view> kTrueFalse = kTrueFalseNames;

Result<HttpResponse> create_join_token(Call& call) {
  JsonBody body(call.request.body);
  std::string name = body.required_string("name");
  auto expires_in_s = body.optional_int("expires_in_s", 1, 10LL * 365 * 24 * 3600);
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string id = call.ctx.ids().new_id("jtk");
  const std::string secret = "allot_join_" + call.ctx.ids().new_secret().substr(6);
  const TimeMs expires_at_ms = expires_in_s ? call.ctx.now_ms() + *expires_in_s * 1000 : 0;
  ALLOT_TRY(call.ctx.apply(CreateJoinToken{
      .id = id, .name = name, .token_hash = sha256_hex(secret), .expires_at_ms = expires_at_ms}));
  call.target_id = id;
  json out = to_json(call.ctx.state().join_tokens.at(id));
  out["token"] = secret;
  return json_reply(201, out);
}

Result<HttpResponse> list_join_tokens(Call& call) {
  return list_for_operator(call, call.ctx.state().join_tokens);
}

Result<HttpResponse> revoke_join_token(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("join token id", id, "jtk"));
  ALLOT_TRY(call.ctx.apply(RevokeJoinToken{.id = id}));
  return json_reply(200, to_json(call.ctx.state().join_tokens.at(id)));
}

// GET /v1/nodes, from the read view.
Result<HttpResponse> list_nodes(ViewCall& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"state", "include_deleted"}));
  ALLOT_TRY_LET(const auto state, read_choice(call.target, "state", node_state_names()));
  ALLOT_TRY_LET(const auto deleted, read_choice(call.target, "include_deleted", kTrueFalse));
  // Deleted nodes are history: listed when asked for, by the flag or by their state.
  const bool with_deleted = deleted == "true" || state == "deleted";
  const auto limit = static_cast<size_t>(page.limit);
  auto admits = [&](const Node& n) {
    return (with_deleted || n.deleted_at_ms == 0) &&
           (!state || node_state_name(n.state()) == *state);
  };
  return shown_page(call.view.nodes(admits, page.after, limit + 1), limit);
}

Result<HttpResponse> get_node(ViewCall& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("node id", id, "nod"));
  const ShownNode shown = call.view.node(id);
  if (shown == nullptr) return fail(ErrorCode::kNotFound, "no node " + id);
  return shown_reply(*shown);
}

Result<const Node*> path_node(const Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(check_id("node id", call.params.front(), "nod"));
  const Node* node = call.ctx.state().node(call.params.front());
  if (node == nullptr) return fail(ErrorCode::kNotFound, "no node " + call.params.front());
  return node;
}

// Applies `command` to the node the path names; answers with the node as it is after.
template <typename Command>
Result<HttpResponse> change_node(Call& call, Command command) {
  ALLOT_TRY_LET(const Node* node, path_node(call));
  command.node_id = node->id;
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, to_json(*call.ctx.state().node(command.node_id)));
}

Result<HttpResponse> cordon(Call& call) {
  return change_node(call, SetNodeAdmin{.admin = NodeAdmin::kCordoned});
}
Result<HttpResponse> uncordon(Call& call) {
  return change_node(call, SetNodeAdmin{.admin = NodeAdmin::kNone});
}
Result<HttpResponse> drain(Call& call) {
  return change_node(call, SetNodeAdmin{.admin = NodeAdmin::kDraining});
}
Result<HttpResponse> revoke_credential(Call& call) {
  return change_node(call, RevokeNodeCredential{});
}
// DELETE /v1/nodes/{id}: an empty node leaves the fleet; kept for billing and the books.
Result<HttpResponse> delete_node(Call& call) { return change_node(call, DeleteNode{}); }

constexpr Resource kResources[] = {
    {.path = "/v1/join-tokens",
     .create = create_join_token,
     .list = list_join_tokens,
     .remove = revoke_join_token},
    {.path = "/v1/nodes", .remove = delete_node, .view_list = list_nodes, .view_get = get_node},
};

constexpr Route kActions[] = {
    {"POST", "/v1/nodes/{id}/cordon", cordon},
    {"POST", "/v1/nodes/{id}/uncordon", uncordon},
    {"POST", "/v1/nodes/{id}/drain", drain},
    {"POST", "/v1/nodes/{id}/revoke-credential", revoke_credential},
};

}  // namespace

std::span<const Route> node_routes() { return route_table<kResources, kActions>(); }

}  // namespace allot
