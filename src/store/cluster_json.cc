#include "store/cluster_json.h"

#include "common/document.h"
#include "store/document_fields.h"
#include "store/price_key_fields.h"

namespace allot {

using nlohmann::json;

// In namespace allot itself, where nlohmann finds them by argument-dependent lookup (not in an
// unnamed one). Rows written before a field existed read as they were then: without a class, on
// demand; without a preference, none; without an operator's hold, none; a state this version does
// not know, lost. The class's pair is declared in store/price_key_fields.h, for invoice lines.
void to_json(json& doc, PriceClass c) { doc = price_class_name(c); }
void from_json(const json& doc, PriceClass& c) {
  c = parse_price_class(doc.get<std::string>()).value_or(PriceClass::kOnDemand);
}
static void to_json(json& doc, Prefer p) { doc = prefer_name(p); }
static void from_json(const json& doc, Prefer& p) {
  p = parse_prefer(doc.get<std::string>()).value_or(Prefer::kNone);
}
static void to_json(json& doc, NodeAdmin a) { doc = node_admin_name(a); }
static void from_json(const json& doc, NodeAdmin& a) {
  a = parse_node_admin(doc.get<std::string>()).value_or(NodeAdmin::kNone);
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
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VolumeMount, volume_id, name, path, read_only)
static void to_json(json& doc, const PublishedPort& p) {
  doc = {{"port", p.port}, {"protocol", p.protocol}, {"public", p.is_public}};
}
static void from_json(const json& doc, PublishedPort& p) {
  p.port = doc.at("port").get<int>();
  p.protocol = doc.value("protocol", std::string("http"));
  p.is_public = doc.value("public", false);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InstanceSpec, gpus, gpu_milli, gpu_models,
                                                cpu_milli, memory_mib, region, price_class, image,
                                                command, env, labels, max_run_s, interactive,
                                                requeue, nodes, max_price_micros, regions, prefer,
                                                from, idle, from_template, volumes, ports,
                                                service_id, service_revision)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    Instance, id, tenant_id, project_id, user_id, spec, state, reason, node_id, gpu_indices,
    gpu_uuids, stop_requested, stop_reason, exit_code, created_at_ms, started_at_ms, ended_at_ms,
    events, gang_id, gang_rank, gang_port, billed_micros, billed_to_ms, postings, hold_id,
    hold_micros, settled, billing_cap_ms, energy, idle_since_ms, idle_notified, last_node_id, run,
    launch_key, launch_digest)

json spec_document(const InstanceSpec& s) { return s; }
json idle_policy_document(const IdlePolicy& p) { return p; }
Result<IdlePolicy> idle_policy_from_document(const json& d) {
  return from_document<IdlePolicy>(d, "idle policy");
}
json instance_document(const Instance& i) { return i; }
Result<Instance> instance_from_document(const json& d) {
  return from_document<Instance>(d, "instance");
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ServiceRevision, number, spec, port, readiness,
                                                created_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    HostedService, id, tenant_id, project_id, user_id, name, model, min_replicas, max_replicas,
    target_rps, target_concurrency, scale_to_zero_after_ms, ready_timeout_ms, spot_fallback, shared,
    price_per_request_micros, price_per_1k_tokens_micros, rising_price_per_request_micros,
    rising_price_per_1k_tokens_micros, prices_rise_at_ms, revisions, revision, serving_revision,
    rollout, rollout_reason, desired, scale_reason, scaled_at_ms, restarts, created_at_ms,
    updated_at_ms, deleted_at_ms)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ServiceKey, id, tenant_id, service_id,
                                                caller_tenant_id, name, prefix, token_hash,
                                                created_at_ms, revoked_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ServiceUsage, id, service_id, tenant_id,
                                                caller_tenant_id, hour_ms, price_per_request_micros,
                                                price_per_1k_tokens_micros, requests, tokens,
                                                malformed, failed, charged_micros, paid_micros,
                                                postings, updated_at_ms)

json service_usage_document(const ServiceUsage& u) { return u; }
Result<ServiceUsage> service_usage_from_document(const json& d) {
  return from_document<ServiceUsage>(d, "service usage");
}

json service_key_document(const ServiceKey& k) { return k; }
Result<ServiceKey> service_key_from_document(const json& d) {
  return from_document<ServiceKey>(d, "service key");
}

json service_document(const HostedService& s) { return s; }
Result<HostedService> service_from_document(const json& d) {
  return from_document<HostedService>(d, "service");
}

// Kept flat: the GPU's telemetry beside its other fields.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GpuTelemetry, utilization_pct, memory_used_bytes, power_mw,
                                   energy_mj, temperature_c, ecc_errors)
constexpr auto kGpuFields =
    join_tables(ALLOT_FIELDS(Gpu, index, uuid, name, model, memory_bytes, pci_bus_id, mig_enabled,
                             healthy, health_reason, used_milli),
                std::array{flat_field<&Gpu::telemetry>()});
static void to_json(json& doc, const Gpu& g) { doc = write_fields(g, kGpuFields); }
static void from_json(const json& doc, Gpu& g) { read_fields(doc, kGpuFields, g); }
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NodeImage, id, names, size_bytes, created_at_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ImageStoreUse, total_bytes, free_bytes)

// The fields read by default are absent from nodes stored before they existed: deletion, the
// agent's address and runtime, and a container node's GPU problem and images.
constexpr auto kNodeFields =
    join_tables(ALLOT_FIELDS(Node, id, name, region, labels, cpu_milli, memory_mib, used_cpu_milli,
                             used_memory_mib, backend, agent_version, credential_hash, admin, lost,
                             joined_at_ms, last_heartbeat_ms, generation, gpus),
                ALLOT_FIELDS_OR_DEFAULT(Node, address, runtime, deleted_at_ms, gpu_problem, images,
                                        image_store, images_at_ms));

static void to_json(json& doc, const Node& n) { doc = write_fields(n, kNodeFields); }
static void from_json(const json& doc, Node& n) { read_fields(doc, kNodeFields, n); }

json node_document(const Node& n) { return n; }
Result<Node> node_from_document(const json& d) { return from_document<Node>(d, "node"); }

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

// The price's key kept flat beside its amounts.
constexpr auto kPriceFields = join_tables(
    price_key_fields<&meter::Price::key>(),
    std::array{field<&meter::Price::effective_ms>("effective_at_ms")},
    ALLOT_FIELDS(meter::Price, gpu_hour_micros, cpu_hour_micros, memory_gib_hour_micros),
    std::array{
        field_or_default<&meter::Price::storage_gb_month_micros>("storage_gb_month_micros")});

json price_document(const meter::Price& p) { return write_fields(p, kPriceFields); }

Result<meter::Price> price_from_document(const json& d) {
  // Unlike an instance's spec, which reads a class it does not know as on demand, a price of one
  // is refused.
  if (unknown_name(d, "price_class", parse_price_class)) {
    return fail(ErrorCode::kInternal, "a stored price has an unknown class");
  }
  try {
    meter::Price p;
    read_fields(d, kPriceFields, p);
    return p;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored price is malformed: ") + e.what());
  }
}

}  // namespace allot
