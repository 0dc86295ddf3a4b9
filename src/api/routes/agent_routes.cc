// What node agents call: join, heartbeat (report and receive their work), and wait (a long poll
// that returns as soon as the node's work changes).
#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/cluster.h"
#include "common/base64.h"
#include "common/image_ref.h"
#include "common/json_depth.h"
#include "common/limits.h"
#include "core/cluster/image_pulls.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

using nlohmann::json;

Error bad_report(const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, "malformed agent report: " + what};
}

// Agents send whole numbers only. JSON reads a number with a fraction, or one past 64 bits, as
// floating point, and reading one into the integer fields below would be undefined behaviour.
bool whole_numbers_only(const json& doc) {
  // A walk with a stack of values left to see rather than recursion (bodies nest at most
  // kMaxJsonDepth deep, but this does not depend on it).
  std::vector<const json*> unseen{&doc};
  while (!unseen.empty()) {
    const json* value = unseen.back();
    unseen.pop_back();
    if (value->is_number_float()) return false;
    if (value->is_structured()) {
      for (const json& item : *value) unseen.push_back(&item);
    }
  }
  return true;
}

Result<json> parse_object(const std::string& body) {
  json doc = parse_outside_json(body);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(ErrorCode::kMalformedJson, "the body must be a JSON object");
  }
  if (!whole_numbers_only(doc)) return std::unexpected(bad_report("numbers must be whole"));
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
  ALLOT_TRY_LET(const json gpus, array_of(d, "gpus", true));
  try {
    JoinNode join{.name = d.at("name"),
                  .address = d.value("address", ""),
                  .region = d.value("region", "default"),
                  .labels = d.value("labels", std::map<std::string, std::string>{}),
                  .cpu_milli = d.value("cpu_milli", int64_t{0}),
                  .memory_mib = d.value("memory_mib", int64_t{0}),
                  .backend = d.value("backend", ""),
                  // Agents from before containers ran only processes.
                  .runtime = d.value("runtime", "process"),
                  .agent_version = d.value("agent_version", ""),
                  .gpu_problem = d.value("gpu_problem", "")};
    for (const json& g : gpus) {
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

// {"list": [{"id", "names", "size_bytes", "created_at_ms"}], "store_total_bytes",
// "store_free_bytes"}: the node's image store. False when it is not of that form.
bool parse_images(const json& images, NodeHeartbeat& beat) {
  if (!images.is_object() || !images.contains("list") || !images["list"].is_array() ||
      images["list"].size() > limits::kMaxNodeImages) {
    return false;
  }
  for (const json& image : images["list"]) {
    beat.images.push_back(NodeImage{.id = image.at("id"),
                                    .names = image.value("names", std::vector<std::string>{}),
                                    .size_bytes = image.value("size_bytes", int64_t{0}),
                                    .created_at_ms = image.value("created_at_ms", TimeMs{0})});
  }
  beat.image_store = {.total_bytes = images.value("store_total_bytes", int64_t{0}),
                      .free_bytes = images.value("store_free_bytes", int64_t{0})};
  beat.images_reported = true;
  return true;
}

// The peer's address as the server logs it, less the IPv4-mapped IPv6 prefix.
std::string peer_address(std::string remote) {
  constexpr std::string_view kMapped = "::ffff:";
  if (remote.starts_with(kMapped) && remote.find('.') != std::string::npos) {
    remote.erase(0, kMapped.size());
  }
  return remote;
}

// An IP address or a DNS name: what goes into a gang's ALLOT_GANG_ADDRS.
bool valid_address(std::string_view address) {
  return !address.empty() && address.size() <= 253 &&
         address.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") ==
             std::string_view::npos;
}

Result<NodeHeartbeat> parse_heartbeat(const json& d) {
  ALLOT_TRY_LET(const json gpus, array_of(d, "gpus", false));
  ALLOT_TRY_LET(const json workloads, array_of(d, "workloads", false));
  try {
    NodeHeartbeat beat{.node_id = d.at("node_id")};
    for (const json& g : gpus) {
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
    for (const json& w : workloads) {
      const std::string state = w.at("state");
      WorkloadReport report{.instance_id = w.at("instance_id"),
                            .exit_code = w.value("exit_code", -1),
                            .signal = w.value("signal", 0),
                            .message = w.value("message", ""),
                            .run = w.value("run", -1)};
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
    beat.gpu_problem = d.value("gpu_problem", "");
    if (auto images = d.find("images"); images != d.end()) {
      if (!parse_images(*images, beat)) return std::unexpected(bad_report("malformed images"));
    }
    for (const json& p : d.value("pulls", json::array())) {
      const std::string state = p.at("state");
      // An agent says how a pull went; only the controller makes one pending.
      auto parsed = parse_pull_state(state);
      if (!parsed || *parsed == PullState::kPending) {
        return std::unexpected(bad_report("unknown pull state " + state));
      }
      beat.pulls.push_back(PullReport{
          .pull_id = p.at("pull_id"), .state = *parsed, .message = p.value("message", "")});
    }
    return beat;
  } catch (const json::exception& e) {
    return std::unexpected(bad_report(e.what()));
  }
}

// Writes the log chunks of a heartbeat. A chunk for an instance not on this node is dropped, but
// for one back in the queue whose last run was here (a preempted run's last words).
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
    if (instance == nullptr) continue;
    const bool ran_here =
        instance->node_id == call.caller.node_id ||
        (instance->node_id.empty() && instance->last_node_id == call.caller.node_id);
    if (!ran_here) continue;
    ALLOT_TRY_LET(const auto data, base64_decode(chunk["data"].get<std::string>()));
    if (data.size() > limits::kMaxLogChunkBytes) {
      return fail(ErrorCode::kLimitExceeded, "a log chunk is over 64 KiB");
    }
    // A gap (a lost earlier chunk) is not fatal: the answer's log_offsets make the agent resend.
    // An agent drops what an instance wrote faster than it ships (limits::kMaxLogBacklogBytes)
    // and says so: that gap is kept as a hole that reads skip and name.
    const bool after_drop =
        chunk.contains("dropped") && chunk["dropped"].is_boolean() && chunk["dropped"].get<bool>();
    auto piece = call.logs.accept(id, chunk["offset"].get<int64_t>(), data, after_drop);
    if (piece && *piece) call.ctx.add_log(std::move(**piece));
  }
  return {};
}

// The tenant's credential for the registry `image` names, opened for the node that pulls it.
// One that does not open (a changed secrets key) is left out: the pull then fails with the
// registry's own reason, and allotd's log says why.
void add_registry_credential(const Call& call, const std::string& tenant_id,
                             const std::string& image, json& item) {
  auto ref = parse_image_ref(image);
  if (!ref || !call.options.sealer) return;
  const RegistryCredential* credential =
      call.ctx.state().registry_credential(tenant_id, ref->registry);
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

// The other members of a gang, ADDRESS:PORT: where its container may connect to them.
std::vector<std::string> gang_peers(const State& state, const Instance& member) {
  std::vector<std::string> peers;
  for (const auto& [id, other] : state.instances) {
    if (other.gang_id != member.gang_id || id == member.id || other.gang_port == 0) continue;
    const Node* node = state.node(other.node_id);
    if (node == nullptr || node->address.empty()) continue;
    peers.push_back(fmt::format("{}:{}", node->address, other.gang_port));
  }
  return peers;
}

// What the agent tells a workload it stops (agent/runtime/runtime.h StopNotice): "preempted" for
// spot work evicted or priced out, whether it ended or went back to the queue; "stopped" for a
// stop asked of the instance (by its tenant, an idle or run-time limit, a budget); "ended" for
// anything else the controller no longer runs there (a lost instance, an unknown one).
json preempted_item(const Call& call, const std::string& id, const std::string& message) {
  return {{"instance_id", id},
          {"grace_ms", call.options.preempt_grace_ms},
          {"reason", "preempted"},
          {"message", message}};
}

json stop_item(const Call& call, const State& state, const std::string& id) {
  const Instance* instance = state.instance(id);
  if (instance != nullptr && instance->stop_requested) {
    return {{"instance_id", id},
            {"grace_ms", call.options.stop_grace_ms},
            {"reason", "stopped"},
            {"message", instance->stop_reason}};
  }
  if (instance != nullptr && instance->state == InstanceState::kPreempted) {
    return preempted_item(call, id, instance->reason);
  }
  if (instance != nullptr && instance->state == InstanceState::kQueued && instance->spec.requeue) {
    // Only preemption sends placed work back to the queue.
    return preempted_item(call, id,
                          "preempted; it has gone back to the queue and starts afresh when placed");
  }
  return {{"instance_id", id},
          {"grace_ms", call.options.stop_grace_ms},
          {"reason", "ended"},
          {"message", instance == nullptr ? "the controller does not know it"
                                          : "the controller no longer runs it on this node"}};
}

// What the node needs to mount the instance's volumes: where each is kept follows from its id
// and backend (agent/volumes.h).
json volume_items(const State& state, const Instance& instance) {
  json out = json::array();
  for (const VolumeMount& mount : instance.spec.volumes) {
    const Volume* volume = state.volume(mount.volume_id);
    out.push_back({{"volume_id", mount.volume_id},
                   {"name", mount.name},
                   {"backend", volume == nullptr ? "" : volume->backend},
                   {"size_gb", volume == nullptr ? 0 : volume->size_gb},
                   {"path", mount.path},
                   {"read_only", mount.read_only}});
  }
  return out;
}

json work_for(const Call& call, const Node& node, const NodeHeartbeat& beat) {
  json run = json::array();
  json stop = json::array();
  std::set<std::string> wanted;
  // The node's placed work (neither queued nor ended), in id order, from the state's index.
  const State& state = call.ctx.state();
  // The run of each workload the node reports: one of an earlier run of an instance is stale.
  std::map<std::string, int, std::less<>> reported_runs;
  for (const WorkloadReport& report : beat.workloads)
    reported_runs[report.instance_id] = report.run;
  static const std::set<std::string> kNothing;
  auto placed = state.placed_on.find(node.id);
  for (const std::string& id : placed == state.placed_on.end() ? kNothing : placed->second) {
    const Instance& instance = *state.instance(id);
    if (instance.stop_requested) {
      stop.push_back(stop_item(call, state, id));
      continue;
    }
    wanted.insert(id);
    if (auto reported = reported_runs.find(id); reported != reported_runs.end() &&
                                                reported->second >= 0 &&
                                                reported->second != instance.run) {
      // An earlier run of it is still on the node (in its grace, or ended and not yet
      // forgotten): it is stopped, and this run is handed over only once the node has let it go.
      stop.push_back(preempted_item(call, id, "preempted; its next run waits for this one to end"));
      continue;
    }
    const std::string& image =
        instance.spec.image.empty() ? call.options.default_image : instance.spec.image;
    json item = {
        {"instance_id", id},
        {"tenant_id", instance.tenant_id},
        {"gang_port", instance.gang_port},
        {"image", image},
        {"command", instance.spec.command},
        {"env", instance.spec.env},
        {"gpu_uuids", instance.gpu_uuids},
        {"cpu_milli", instance.spec.cpu_milli},
        {"memory_mib", instance.spec.memory_mib},
        {"gpu_milli", instance.milli_per_gpu() * static_cast<int64_t>(instance.gpu_uuids.size())},
        {"run", instance.run}};
    if (!instance.spec.volumes.empty()) item["volumes"] = volume_items(state, instance);
    // Peers and the registry credential go only with work that has yet to start: they are for
    // its start (the way to its peers, the pull).
    if (instance.state != InstanceState::kRunning) {
      if (instance.gang_port != 0) item["gang_peers"] = gang_peers(call.ctx.state(), instance);
      add_registry_credential(call, instance.tenant_id, image, item);
    }
    run.push_back(std::move(item));
  }
  json pull = json::array();
  for (const ImagePull* wanted_pull : pulls_for_node(call.ctx.state(), node.id)) {
    json item = {{"pull_id", wanted_pull->id}, {"image", wanted_pull->image}};
    add_registry_credential(call, wanted_pull->tenant_id, wanted_pull->image, item);
    pull.push_back(std::move(item));
  }
  json forget = json::array();
  json offsets = json::object();
  for (const WorkloadReport& report : beat.workloads) {
    // Unknown (the store failed): from 0, and the bytes held are dropped when they come again.
    offsets[report.instance_id] = call.logs.size(report.instance_id).value_or(0);
    const bool active = report.state == WorkloadReportState::kRunning ||
                        report.state == WorkloadReportState::kStarting;
    if (!active) {
      forget.push_back(report.instance_id);  // Its end is recorded now.
    } else if (!wanted.contains(report.instance_id)) {
      // Nothing should run here that the controller does not want: no orphans.
      stop.push_back(stop_item(call, state, report.instance_id));
    }
  }
  return {{"generation", node.generation},
          {"heartbeat_interval_ms", call.options.heartbeat_interval_ms},
          {"run", run},
          {"stop", stop},
          {"forget", forget},
          {"pull", pull},
          {"log_offsets", offsets}};
}

Result<HttpResponse> join(Call& call) {
  ALLOT_TRY_LET(const auto token, bearer_token(call.request.authorization));
  ALLOT_TRY_LET(const json doc, parse_object(call.request.body));
  ALLOT_TRY_LET(JoinNode join, parse_join(doc));
  const std::string credential = "allot_node_" + call.ctx.ids().new_secret().substr(6);
  // Where its gang peers reach it: what the agent says, else where its join came from.
  if (join.address.empty()) join.address = peer_address(call.request.remote);
  if (!join.address.empty() && !valid_address(join.address)) {
    return fail(ErrorCode::kInvalidArgument,
                "address must be an IP address or a host name, not '" + join.address + "'");
  }
  join.node_id = call.ctx.ids().new_id("nod");
  join.join_token_hash = sha256_hex(token);
  join.credential_hash = sha256_hex(credential);
  ALLOT_TRY(call.ctx.apply(join));
  const Node* node = call.ctx.state().node_for_credential(join.credential_hash);
  call.target_id = node->id;
  return json_reply(201, {{"node_id", node->id}, {"credential", credential}});
}

Result<HttpResponse> heartbeat(Call& call) {
  ALLOT_TRY_LET(const json doc, parse_object(call.request.body));
  ALLOT_TRY_LET(const NodeHeartbeat beat, parse_heartbeat(doc));
  if (beat.node_id != call.caller.node_id) {
    return fail(ErrorCode::kForbidden, "a node may only report for itself");
  }
  // Logs first: a workload's last output is in the same report as its exit.
  ALLOT_TRY_LET(const json logs, array_of(doc, "logs", false));
  ALLOT_TRY(store_logs(call, logs));
  ALLOT_TRY(call.ctx.apply_heartbeat(beat));
  return json_reply(200, work_for(call, *call.ctx.state().node(beat.node_id), beat));
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
  call.ctx.park(node_id, std::move(poll), call.ctx.now_ms() + call.options.long_poll_ms);
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
