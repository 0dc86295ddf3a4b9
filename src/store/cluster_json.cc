#include "store/cluster_json.h"

#include "common/document.h"

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

}  // namespace

// Outside the unnamed namespace, where nlohmann finds them by argument-dependent lookup. Rows
// written before a field existed read as they were then: without a class, on demand; without a
// preference, none; a state this version does not know, lost.
static void to_json(json& doc, PriceClass c) { doc = price_class_name(c); }
static void from_json(const json& doc, PriceClass& c) {
  c = parse_price_class(doc.get<std::string>()).value_or(PriceClass::kOnDemand);
}
static void to_json(json& doc, Prefer p) { doc = prefer_name(p); }
static void from_json(const json& doc, Prefer& p) {
  p = parse_prefer(doc.get<std::string>()).value_or(Prefer::kNone);
}
static void to_json(json& doc, IdleAction a) { doc = idle_action_name(a); }
static void from_json(const json& doc, IdleAction& a) { read_name(doc, a, parse_idle_action); }
static void to_json(json& doc, InstanceState state) { doc = instance_state_name(state); }
static void from_json(const json& doc, InstanceState& state) {
  state = InstanceState::kLost;
  for (auto known : {InstanceState::kQueued, InstanceState::kScheduled, InstanceState::kStarting,
                     InstanceState::kRunning, InstanceState::kSucceeded, InstanceState::kFailed,
                     InstanceState::kStopped, InstanceState::kPreempted}) {
    if (instance_state_name(known) == doc.get<std::string>()) state = known;
  }
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IdlePolicy, threshold_pct, window_s, action)

// A spec without an idle policy of its own keeps null.
static void to_json(json& doc, const std::optional<IdlePolicy>& idle) {
  doc = idle ? json(*idle) : json(nullptr);
}
static void from_json(const json& doc, std::optional<IdlePolicy>& idle) {
  idle = doc.is_null() ? std::nullopt : std::optional(doc.get<IdlePolicy>());
}

// The energy an instance used, by UTC day: [{"day_ms", "energy_mj", "carbon_ug"}, ...].
static void to_json(json& doc, const std::map<TimeMs, EnergyUse>& energy) {
  doc = json::array();
  for (const auto& [day_ms, use] : energy) {
    doc.push_back({{"day_ms", day_ms}, {"energy_mj", use.energy_mj}, {"carbon_ug", use.carbon_ug}});
  }
}
static void from_json(const json& doc, std::map<TimeMs, EnergyUse>& energy) {
  for (const json& e : doc) {
    energy[e.at("day_ms").get<TimeMs>()] =
        EnergyUse{.energy_mj = e.at("energy_mj"), .carbon_ug = e.at("carbon_ug")};
  }
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InstanceEvent, at_ms, state, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InstanceSpec, gpus, gpu_milli, gpu_models,
                                                cpu_milli, memory_mib, region, price_class, image,
                                                command, env, labels, max_run_s, interactive,
                                                requeue, nodes, max_price_micros, regions, prefer,
                                                from, idle)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    Instance, id, tenant_id, project_id, user_id, spec, state, reason, node_id, gpu_indices,
    gpu_uuids, stop_requested, stop_reason, exit_code, created_at_ms, started_at_ms, ended_at_ms,
    events, gang_id, gang_rank, gang_port, billed_micros, billed_to_ms, postings, hold_id,
    hold_micros, settled, billing_cap_ms, energy, idle_since_ms, idle_notified)

json spec_document(const InstanceSpec& s) { return s; }
json idle_policy_document(const IdlePolicy& p) { return p; }
Result<IdlePolicy> idle_policy_from_document(const json& d) {
  return from_document<IdlePolicy>(d, "idle policy");
}
json instance_document(const Instance& i) { return i; }
Result<Instance> instance_from_document(const json& d) {
  return from_document<Instance>(d, "instance");
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

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Quota, id, tenant_id, project_id, gpu_model, gpu_milli,
                                   created_at_ms, deleted_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Reservation, id, tenant_id, gpu_model, gpus, starts_at_ms,
                                   ends_at_ms, created_at_ms, cancelled_at_ms)

json quota_document(const Quota& q) { return q; }
json reservation_document(const Reservation& r) { return r; }
Result<Quota> quota_from_document(const json& d) { return from_document<Quota>(d, "quota"); }
Result<Reservation> reservation_from_document(const json& d) {
  return from_document<Reservation>(d, "reservation");
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
