#include "store/cluster_json.h"

namespace allot {
namespace {

using nlohmann::json;

json gpu_document(const Gpu& g) {
  return {{"index", g.index},
          {"uuid", g.uuid},
          {"name", g.name},
          {"model", g.model},
          {"memory_bytes", g.memory_bytes},
          {"pci_bus_id", g.pci_bus_id},
          {"mig_enabled", g.mig_enabled},
          {"healthy", g.healthy},
          {"health_reason", g.health_reason},
          {"used_milli", g.used_milli},
          {"utilization_pct", g.telemetry.utilization_pct},
          {"memory_used_bytes", g.telemetry.memory_used_bytes},
          {"power_mw", g.telemetry.power_mw},
          {"energy_mj", g.telemetry.energy_mj},
          {"temperature_c", g.telemetry.temperature_c},
          {"ecc_errors", g.telemetry.ecc_errors}};
}

Gpu gpu_from(const json& d) {
  return Gpu{.index = d.at("index"),
             .uuid = d.at("uuid"),
             .name = d.at("name"),
             .model = d.at("model"),
             .memory_bytes = d.at("memory_bytes"),
             .pci_bus_id = d.at("pci_bus_id"),
             .mig_enabled = d.at("mig_enabled"),
             .healthy = d.at("healthy"),
             .health_reason = d.at("health_reason"),
             .used_milli = d.at("used_milli"),
             .telemetry = {.utilization_pct = d.at("utilization_pct"),
                           .memory_used_bytes = d.at("memory_used_bytes"),
                           .power_mw = d.at("power_mw"),
                           .energy_mj = d.at("energy_mj"),
                           .temperature_c = d.at("temperature_c"),
                           .ecc_errors = d.at("ecc_errors")}};
}

InstanceSpec spec_from(const json& d) {
  return InstanceSpec{
      .gpus = d.at("gpus"),
      .gpu_milli = d.at("gpu_milli"),
      .gpu_models = d.at("gpu_models").get<std::vector<std::string>>(),
      .cpu_milli = d.at("cpu_milli"),
      .memory_mib = d.at("memory_mib"),
      .region = d.at("region"),
      .price_class =
          parse_price_class(d.at("price_class").get<std::string>()).value_or(PriceClass::kOnDemand),
      .image = d.value("image", std::string()),
      .command = d.at("command").get<std::vector<std::string>>(),
      .env = d.at("env").get<std::map<std::string, std::string>>(),
      .labels = d.at("labels").get<std::map<std::string, std::string>>(),
      .max_run_s = d.at("max_run_s"),
      .interactive = d.at("interactive"),
      .requeue = d.value("requeue", false),
      .nodes = d.value("nodes", 1),
      .max_price_micros = d.value("max_price_micros", int64_t{0}),
      // Rows written before regions and preferences existed have none: any region, no preference.
      .regions = d.value("regions", std::vector<std::string>{}),
      .prefer = parse_prefer(d.value("prefer", std::string())).value_or(Prefer::kNone),
      .from = d.value("from", std::string()),
  };
}

InstanceState state_from(const std::string& name) {
  for (auto state : {InstanceState::kQueued, InstanceState::kScheduled, InstanceState::kStarting,
                     InstanceState::kRunning, InstanceState::kSucceeded, InstanceState::kFailed,
                     InstanceState::kStopped, InstanceState::kPreempted}) {
    if (instance_state_name(state) == name) return state;
  }
  return InstanceState::kLost;
}

}  // namespace

json spec_document(const InstanceSpec& s) {
  return {{"gpus", s.gpus},
          {"gpu_milli", s.gpu_milli},
          {"gpu_models", s.gpu_models},
          {"cpu_milli", s.cpu_milli},
          {"memory_mib", s.memory_mib},
          {"region", s.region},
          {"price_class", price_class_name(s.price_class)},
          {"image", s.image},
          {"command", s.command},
          {"env", s.env},
          {"labels", s.labels},
          {"max_run_s", s.max_run_s},
          {"interactive", s.interactive},
          {"requeue", s.requeue},
          {"nodes", s.nodes},
          {"max_price_micros", s.max_price_micros},
          {"regions", s.regions},
          {"prefer", prefer_name(s.prefer)},
          {"from", s.from},
          {"idle", s.idle ? idle_policy_document(*s.idle) : json(nullptr)}};
}

json idle_policy_document(const IdlePolicy& p) {
  return {{"threshold_pct", p.threshold_pct},
          {"window_s", p.window_s},
          {"action", std::string(idle_action_name(p.action))}};
}

Result<IdlePolicy> idle_policy_from_document(const json& d) {
  try {
    auto action = parse_idle_action(d.at("action").get<std::string>());
    if (!action) return fail(ErrorCode::kInternal, "a stored idle policy has an unknown action");
    return IdlePolicy{
        .threshold_pct = d.at("threshold_pct"), .window_s = d.at("window_s"), .action = *action};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal,
                std::string("a stored idle policy is malformed: ") + e.what());
  }
}

json node_document(const Node& n) {
  json gpus = json::array();
  for (const Gpu& gpu : n.gpus) gpus.push_back(gpu_document(gpu));
  json images = json::array();
  for (const NodeImage& image : n.images) {
    images.push_back({{"id", image.id},
                      {"names", image.names},
                      {"size_bytes", image.size_bytes},
                      {"created_at_ms", image.created_at_ms}});
  }
  return {{"id", n.id},
          {"name", n.name},
          {"address", n.address},
          {"region", n.region},
          {"labels", n.labels},
          {"cpu_milli", n.cpu_milli},
          {"memory_mib", n.memory_mib},
          {"used_cpu_milli", n.used_cpu_milli},
          {"used_memory_mib", n.used_memory_mib},
          {"backend", n.backend},
          {"runtime", n.runtime},
          {"agent_version", n.agent_version},
          {"credential_hash", n.credential_hash},
          {"admin", node_admin_name(n.admin)},
          {"lost", n.lost},
          {"joined_at_ms", n.joined_at_ms},
          {"last_heartbeat_ms", n.last_heartbeat_ms},
          {"deleted_at_ms", n.deleted_at_ms},
          {"generation", n.generation},
          {"gpus", gpus},
          {"gpu_problem", n.gpu_problem},
          {"images", images},
          {"image_store",
           {{"total_bytes", n.image_store.total_bytes}, {"free_bytes", n.image_store.free_bytes}}},
          {"images_at_ms", n.images_at_ms}};
}

json instance_document(const Instance& i) {
  json events = json::array();
  for (const InstanceEvent& e : i.events) {
    events.push_back({{"at_ms", e.at_ms}, {"state", e.state}, {"message", e.message}});
  }
  json energy = json::array();
  for (const auto& [day_ms, use] : i.energy) {
    energy.push_back(
        {{"day_ms", day_ms}, {"energy_mj", use.energy_mj}, {"carbon_ug", use.carbon_ug}});
  }
  return {{"id", i.id},
          {"tenant_id", i.tenant_id},
          {"project_id", i.project_id},
          {"user_id", i.user_id},
          {"spec", spec_document(i.spec)},
          {"state", instance_state_name(i.state)},
          {"reason", i.reason},
          {"node_id", i.node_id},
          {"gpu_indices", i.gpu_indices},
          {"gpu_uuids", i.gpu_uuids},
          {"stop_requested", i.stop_requested},
          {"stop_reason", i.stop_reason},
          {"exit_code", i.exit_code},
          {"created_at_ms", i.created_at_ms},
          {"started_at_ms", i.started_at_ms},
          {"ended_at_ms", i.ended_at_ms},
          {"events", events},
          {"gang_id", i.gang_id},
          {"gang_rank", i.gang_rank},
          {"gang_port", i.gang_port},
          {"billed_micros", i.billed_micros},
          {"billed_to_ms", i.billed_to_ms},
          {"postings", i.postings},
          {"hold_id", i.hold_id},
          {"hold_micros", i.hold_micros},
          {"settled", i.settled},
          {"billing_cap_ms", i.billing_cap_ms},
          {"energy", energy},
          {"idle_since_ms", i.idle_since_ms},
          {"idle_notified", i.idle_notified}};
}

Result<Node> node_from_document(const json& d) {
  try {
    Node n{.id = d.at("id"),
           .name = d.at("name"),
           .address = d.value("address", ""),
           .region = d.at("region"),
           .labels = d.at("labels").get<std::map<std::string, std::string>>(),
           .cpu_milli = d.at("cpu_milli"),
           .memory_mib = d.at("memory_mib"),
           .used_cpu_milli = d.at("used_cpu_milli"),
           .used_memory_mib = d.at("used_memory_mib"),
           .backend = d.at("backend"),
           .runtime = d.value("runtime", "process"),
           .agent_version = d.at("agent_version"),
           .credential_hash = d.at("credential_hash"),
           .admin = parse_node_admin(d.at("admin").get<std::string>()).value_or(NodeAdmin::kNone),
           .lost = d.at("lost"),
           .joined_at_ms = d.at("joined_at_ms"),
           .last_heartbeat_ms = d.at("last_heartbeat_ms"),
           // Absent from nodes stored before deletion existed.
           .deleted_at_ms = d.value("deleted_at_ms", TimeMs{0}),
           .generation = d.at("generation")};
    for (const json& gpu : d.at("gpus")) n.gpus.push_back(gpu_from(gpu));
    // Absent from nodes stored before container nodes reported their images.
    n.gpu_problem = d.value("gpu_problem", "");
    for (const json& image : d.value("images", json::array())) {
      n.images.push_back(NodeImage{.id = image.at("id"),
                                   .names = image.at("names"),
                                   .size_bytes = image.at("size_bytes"),
                                   .created_at_ms = image.at("created_at_ms")});
    }
    const json store = d.value("image_store", json::object());
    n.image_store = {.total_bytes = store.value("total_bytes", int64_t{0}),
                     .free_bytes = store.value("free_bytes", int64_t{0})};
    n.images_at_ms = d.value("images_at_ms", TimeMs{0});
    return n;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored node is malformed: ") + e.what());
  }
}

Result<Instance> instance_from_document(const json& d) {
  try {
    Instance i{.id = d.at("id"),
               .tenant_id = d.at("tenant_id"),
               .project_id = d.at("project_id"),
               .user_id = d.at("user_id"),
               .spec = spec_from(d.at("spec")),
               .state = state_from(d.at("state")),
               .reason = d.at("reason"),
               .node_id = d.at("node_id"),
               .gpu_indices = d.at("gpu_indices").get<std::vector<int>>(),
               .gpu_uuids = d.at("gpu_uuids").get<std::vector<std::string>>(),
               .stop_requested = d.at("stop_requested"),
               .stop_reason = d.value("stop_reason", std::string()),
               .exit_code = d.at("exit_code"),
               .created_at_ms = d.at("created_at_ms"),
               .started_at_ms = d.at("started_at_ms"),
               .ended_at_ms = d.at("ended_at_ms"),
               .gang_id = d.value("gang_id", std::string()),
               .gang_rank = d.value("gang_rank", 0),
               .gang_port = d.value("gang_port", 0),
               .billed_micros = d.value("billed_micros", int64_t{0}),
               .billed_to_ms = d.value("billed_to_ms", int64_t{0}),
               .postings = d.value("postings", int64_t{0}),
               .hold_id = d.value("hold_id", std::string()),
               .hold_micros = d.value("hold_micros", int64_t{0}),
               .settled = d.value("settled", false),
               .billing_cap_ms = d.value("billing_cap_ms", int64_t{0}),
               .idle_since_ms = d.value("idle_since_ms", int64_t{0}),
               .idle_notified = d.value("idle_notified", false)};
    // Rows written before idle stop have no "idle": no policy of their own.
    if (const json& spec = d.at("spec"); spec.contains("idle") && !spec.at("idle").is_null()) {
      auto policy = idle_policy_from_document(spec.at("idle"));
      if (!policy) return std::unexpected(policy.error());
      i.spec.idle = *policy;
    }
    for (const json& e : d.at("events")) {
      i.events.push_back(InstanceEvent{e.at("at_ms"), e.at("state"), e.at("message")});
    }
    for (const json& e : d.value("energy", json::array())) {
      i.energy[e.at("day_ms").get<TimeMs>()] =
          EnergyUse{.energy_mj = e.at("energy_mj"), .carbon_ug = e.at("carbon_ug")};
    }
    return i;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored instance is malformed: ") + e.what());
  }
}

json quota_document(const Quota& q) {
  return {{"id", q.id},
          {"tenant_id", q.tenant_id},
          {"project_id", q.project_id},
          {"gpu_model", q.gpu_model},
          {"gpu_milli", q.gpu_milli},
          {"created_at_ms", q.created_at_ms},
          {"deleted_at_ms", q.deleted_at_ms}};
}

json reservation_document(const Reservation& r) {
  return {{"id", r.id},
          {"tenant_id", r.tenant_id},
          {"gpu_model", r.gpu_model},
          {"gpus", r.gpus},
          {"starts_at_ms", r.starts_at_ms},
          {"ends_at_ms", r.ends_at_ms},
          {"created_at_ms", r.created_at_ms},
          {"cancelled_at_ms", r.cancelled_at_ms}};
}

Result<Quota> quota_from_document(const json& d) {
  try {
    return Quota{.id = d.at("id"),
                 .tenant_id = d.at("tenant_id"),
                 .project_id = d.at("project_id"),
                 .gpu_model = d.at("gpu_model"),
                 .gpu_milli = d.at("gpu_milli"),
                 .created_at_ms = d.at("created_at_ms"),
                 .deleted_at_ms = d.at("deleted_at_ms")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored quota is malformed: ") + e.what());
  }
}

Result<Reservation> reservation_from_document(const json& d) {
  try {
    return Reservation{.id = d.at("id"),
                       .tenant_id = d.at("tenant_id"),
                       .gpu_model = d.at("gpu_model"),
                       .gpus = d.at("gpus"),
                       .starts_at_ms = d.at("starts_at_ms"),
                       .ends_at_ms = d.at("ends_at_ms"),
                       .created_at_ms = d.at("created_at_ms"),
                       .cancelled_at_ms = d.at("cancelled_at_ms")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal,
                std::string("a stored reservation is malformed: ") + e.what());
  }
}

json price_document(const meter::Price& p) {
  return {{"gpu_model", p.key.model},
          {"region", p.key.region},
          {"price_class", price_class_name(p.key.price_class)},
          {"effective_at_ms", p.effective_ms},
          {"gpu_hour_micros", p.gpu_hour_micros},
          {"cpu_hour_micros", p.cpu_hour_micros},
          {"memory_gib_hour_micros", p.memory_gib_hour_micros}};
}

Result<meter::Price> price_from_document(const json& d) {
  try {
    auto price_class = parse_price_class(d.at("price_class").get<std::string>());
    if (!price_class) return fail(ErrorCode::kInternal, "a stored price has an unknown class");
    return meter::Price{
        .key = {.model = d.at("gpu_model"), .region = d.at("region"), .price_class = *price_class},
        .effective_ms = d.at("effective_at_ms"),
        .gpu_hour_micros = d.at("gpu_hour_micros"),
        .cpu_hour_micros = d.at("cpu_hour_micros"),
        .memory_gib_hour_micros = d.at("memory_gib_hour_micros")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored price is malformed: ") + e.what());
  }
}

}  // namespace allot
