// What node agents call: join, heartbeat (report and receive their work), and wait (a long poll
// that returns as soon as the node's work changes).
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/app.h"
#include "api/reply.h"
#include "common/base64.h"
#include "common/image_ref.h"
#include "common/limits.h"
#include "core/validate.h"

namespace allot {
namespace {

using nlohmann::json;

Error bad_report(const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, "malformed agent report: " + what};
}

Result<json> parse_object(const std::string& body) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(ErrorCode::kMalformedJson, "the body must be a JSON object");
  }
  return doc;
}

// The array named `name`; an absent optional one is empty. Anything else is refused: iterating a
// JSON object or a number would read it as if it were an array.
Result<json> array_of(const json& d, const char* name, bool required) {
  auto it = d.find(name);
  if (it == d.end() && !required) return json::array();
  if (it == d.end() || !it->is_array()) {
    return std::unexpected(bad_report(fmt::format("'{}' must be an array", name)));
  }
  return *it;
}

Result<JoinNode> parse_join(const json& d) {
  auto gpus = array_of(d, "gpus", true);
  if (!gpus) return std::unexpected(gpus.error());
  try {
    JoinNode join{.name = d.at("name"),
                  .region = d.value("region", "default"),
                  .labels = d.value("labels", std::map<std::string, std::string>{}),
                  .cpu_milli = d.value("cpu_milli", int64_t{0}),
                  .memory_mib = d.value("memory_mib", int64_t{0}),
                  .backend = d.value("backend", ""),
                  // Agents from before containers ran only processes.
                  .runtime = d.value("runtime", "process"),
                  .agent_version = d.value("agent_version", "")};
    for (const json& g : *gpus) {
      join.gpus.push_back(GpuReport{.index = g.at("index"),
                                    .uuid = g.at("uuid"),
                                    .name = g.value("name", ""),
                                    .model = g.value("model", ""),
                                    .memory_bytes = g.value("memory_bytes", int64_t{0}),
                                    .pci_bus_id = g.value("pci_bus_id", ""),
                                    .mig_enabled = g.value("mig_enabled", false)});
    }
    return join;
  } catch (const json::exception& e) {
    return std::unexpected(bad_report(e.what()));
  }
}

Result<NodeHeartbeat> parse_heartbeat(const json& d) {
  auto gpus = array_of(d, "gpus", false);
  if (!gpus) return std::unexpected(gpus.error());
  auto workloads = array_of(d, "workloads", false);
  if (!workloads) return std::unexpected(workloads.error());
  try {
    NodeHeartbeat beat{.node_id = d.at("node_id")};
    for (const json& g : *gpus) {
      beat.gpus.push_back(
          GpuHeartbeat{.index = g.at("index"),
                       .telemetry = {.utilization_pct = g.value("utilization_pct", 0),
                                     .memory_used_bytes = g.value("memory_used_bytes", int64_t{0}),
                                     .power_mw = g.value("power_mw", int64_t{0}),
                                     .energy_mj = g.value("energy_mj", int64_t{0}),
                                     .temperature_c = g.value("temperature_c", 0),
                                     .ecc_errors = g.value("ecc_errors", int64_t{0})},
                       // An agent that could not read the utilisation leaves it out.
                       .utilization_read = g.contains("utilization_pct"),
                       .lost = g.value("lost", false),
                       .xids = g.value("xids", std::vector<int>{})});
    }
    for (const json& w : *workloads) {
      const std::string state = w.at("state");
      WorkloadReport report{.instance_id = w.at("instance_id"),
                            .exit_code = w.value("exit_code", -1),
                            .signal = w.value("signal", 0),
                            .message = w.value("message", "")};
      if (state == "running") {
        report.state = WorkloadReportState::kRunning;
      } else if (state == "starting") {
        report.state = WorkloadReportState::kStarting;
      } else if (state == "exited") {
        report.state = WorkloadReportState::kExited;
      } else if (state == "failed_to_start") {
        report.state = WorkloadReportState::kFailedToStart;
      } else {
        return std::unexpected(bad_report("unknown workload state " + state));
      }
      beat.workloads.push_back(std::move(report));
    }
    return beat;
  } catch (const json::exception& e) {
    return std::unexpected(bad_report(e.what()));
  }
}

// Writes the log chunks of a heartbeat. A chunk for an instance not on this node is refused.
Status store_logs(Call& call, const json& chunks) {
  if (!chunks.is_array()) return std::unexpected(bad_report("logs must be an array"));
  for (const json& chunk : chunks) {
    if (!chunk.is_object() || !chunk.contains("instance_id") || !chunk["instance_id"].is_string() ||
        !chunk.contains("offset") || !chunk["offset"].is_number_integer() ||
        !chunk.contains("data") || !chunk["data"].is_string()) {
      return std::unexpected(bad_report("a log chunk needs instance_id, offset and data"));
    }
    const std::string id = chunk["instance_id"];
    const Instance* instance = call.ctx.state().instance(id);
    if (instance == nullptr || instance->node_id != call.caller.node_id) continue;
    auto data = base64_decode(chunk["data"].get<std::string>());
    if (!data) return std::unexpected(data.error());
    if (data->size() > limits::kMaxLogChunkBytes) {
      return fail(ErrorCode::kLimitExceeded, "a log chunk is over 64 KiB");
    }
    // A gap (a lost earlier chunk) is not fatal: the answer's log_offsets make the agent resend.
    (void)call.logs.append(id, chunk["offset"].get<int64_t>(), *data);
  }
  return {};
}

// The tenant's credential for the registry `image` names, opened for the node that pulls it.
// One that does not open (a changed secrets key) is left out: the pull then fails with the
// registry's own reason, and allotd's log says why.
void add_registry_credential(const Call& call, const Instance& instance, const std::string& image,
                             json& item) {
  auto ref = parse_image_ref(image);
  if (!ref || !call.options.sealer) return;
  const RegistryCredential* credential =
      call.ctx.state().registry_credential(instance.tenant_id, ref->registry);
  if (credential == nullptr) return;
  auto password =
      call.options.sealer->open(credential->sealed_password, credential->sealing_context());
  if (!password) {
    spdlog::error("msg=\"cannot open a registry credential\" tenant={} host={} error=\"{}\"",
                  credential->tenant_id, credential->host, password.error().message);
    return;
  }
  item["registry_username"] = credential->username;
  item["registry_password"] = *password;
}

json work_for(const Call& call, const Node& node, const NodeHeartbeat& beat) {
  json run = json::array();
  json stop = json::array();
  std::set<std::string> wanted;
  for (const auto& [id, instance] : call.ctx.state().instances) {
    if (instance.node_id != node.id || is_final(instance.state) ||
        instance.state == InstanceState::kQueued) {
      continue;
    }
    if (instance.stop_requested) {
      stop.push_back({{"instance_id", id}, {"grace_ms", call.options.stop_grace_ms}});
      continue;
    }
    wanted.insert(id);
    const std::string& image =
        instance.spec.image.empty() ? call.options.default_image : instance.spec.image;
    json item = {{"instance_id", id},
                 {"tenant_id", instance.tenant_id},
                 {"image", image},
                 {"command", instance.spec.command},
                 {"env", instance.spec.env},
                 {"gpu_uuids", instance.gpu_uuids},
                 {"cpu_milli", instance.spec.cpu_milli},
                 {"memory_mib", instance.spec.memory_mib}};
    // The registry credential goes only with work that has yet to start: it is for the pull.
    if (instance.state != InstanceState::kRunning)
      add_registry_credential(call, instance, image, item);
    run.push_back(std::move(item));
  }
  json forget = json::array();
  json offsets = json::object();
  for (const WorkloadReport& report : beat.workloads) {
    offsets[report.instance_id] = call.logs.size(report.instance_id);
    const bool active = report.state == WorkloadReportState::kRunning ||
                        report.state == WorkloadReportState::kStarting;
    if (!active) {
      forget.push_back(report.instance_id);  // Its end is recorded now.
    } else if (!wanted.contains(report.instance_id)) {
      // Nothing should run here that the controller does not want: no orphans.
      stop.push_back(
          {{"instance_id", report.instance_id}, {"grace_ms", call.options.stop_grace_ms}});
    }
  }
  return {{"generation", node.generation},
          {"heartbeat_interval_ms", call.options.heartbeat_interval_ms},
          {"run", run},
          {"stop", stop},
          {"forget", forget},
          {"log_offsets", offsets}};
}

Result<HttpResponse> join(Call& call) {
  auto token = bearer_token(call.request.authorization);
  if (!token) return std::unexpected(token.error());
  auto doc = parse_object(call.request.body);
  if (!doc) return std::unexpected(doc.error());
  auto join = parse_join(*doc);
  if (!join) return std::unexpected(join.error());
  const std::string credential = "allot_node_" + call.ctx.ids().new_secret().substr(6);
  join->node_id = call.ctx.ids().new_id("nod");
  join->join_token_hash = sha256_hex(*token);
  join->credential_hash = sha256_hex(credential);
  ALLOT_TRY(call.ctx.apply(*join));
  const Node* node = call.ctx.state().node_for_credential(join->credential_hash);
  call.target_id = node->id;
  return json_reply(201, {{"node_id", node->id}, {"credential", credential}});
}

Result<HttpResponse> heartbeat(Call& call) {
  auto doc = parse_object(call.request.body);
  if (!doc) return std::unexpected(doc.error());
  auto beat = parse_heartbeat(*doc);
  if (!beat) return std::unexpected(beat.error());
  if (beat->node_id != call.caller.node_id) {
    return fail(ErrorCode::kForbidden, "a node may only report for itself");
  }
  // Logs first: a workload's last output is in the same report as its exit.
  auto logs = array_of(*doc, "logs", false);
  if (!logs) return std::unexpected(logs.error());
  ALLOT_TRY(store_logs(call, *logs));
  ALLOT_TRY(call.ctx.apply(*beat));
  return json_reply(200, work_for(call, *call.ctx.state().node(beat->node_id), *beat));
}

Result<HttpResponse> wait(Call& call) {
  JsonBody body(call.request.body);
  auto seen = body.optional_int("generation", 0, INT64_MAX).value_or(0);
  ALLOT_TRY(body.finish());
  const std::string node_id = call.caller.node_id;
  ParkedPoll poll = [node_id, seen](const State& state,
                                    bool expired) -> std::optional<HttpResponse> {
    const Node* node = state.node(node_id);
    if (node == nullptr) return error_reply(Error{ErrorCode::kNotFound, "the node is gone"});
    if (node->generation > seen || expired) {
      return json_reply(200, {{"generation", node->generation}});
    }
    return std::nullopt;
  };
  if (auto now = poll(call.ctx.state(), false)) return *now;
  call.ctx.park(std::move(poll), call.ctx.now_ms() + call.options.long_poll_ms);
  return HttpResponse{};
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/agent/join", join, RouteAuth::kJoin},
    {"POST", "/v1/agent/heartbeat", heartbeat, RouteAuth::kNode},
    {"POST", "/v1/agent/wait", wait, RouteAuth::kNode},
};

}  // namespace

std::span<const Route> agent_routes() { return kRoutes; }

}  // namespace allot
