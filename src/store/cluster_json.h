// Nodes, instances, quotas and reservations as JSON documents: how the store keeps them (one
// document per row) and the base of what the API shows.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/cluster.h"
#include "core/model/rules.h"
#include "core/model/service.h"
#include "meter/rating.h"

namespace allot {

nlohmann::json node_document(const Node& node);
nlohmann::json instance_document(const Instance& instance);
nlohmann::json spec_document(const InstanceSpec& spec);
// An idle-stop policy: {"threshold_pct": 10, "window_s": 600, "action": "stop"}.
nlohmann::json idle_policy_document(const IdlePolicy& policy);
[[nodiscard]] Result<IdlePolicy> idle_policy_from_document(const nlohmann::json& doc);

[[nodiscard]] Result<Node> node_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<Instance> instance_from_document(const nlohmann::json& doc);
nlohmann::json service_document(const HostedService& service);
[[nodiscard]] Result<HostedService> service_from_document(const nlohmann::json& doc);
nlohmann::json service_key_document(const ServiceKey& key);
[[nodiscard]] Result<ServiceKey> service_key_from_document(const nlohmann::json& doc);
nlohmann::json service_usage_document(const ServiceUsage& usage);
[[nodiscard]] Result<ServiceUsage> service_usage_from_document(const nlohmann::json& doc);

nlohmann::json price_document(const meter::Price& price);
[[nodiscard]] Result<meter::Price> price_from_document(const nlohmann::json& doc);
nlohmann::json quota_document(const Quota& quota);
nlohmann::json reservation_document(const Reservation& reservation);
[[nodiscard]] Result<Quota> quota_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<Reservation> reservation_from_document(const nlohmann::json& doc);

}  // namespace allot
