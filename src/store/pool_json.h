// Node pools and pool nodes as JSON documents: how the store keeps them (one document per row)
// and the base of what the API shows.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/pool.h"

namespace allot {

nlohmann::json pool_document(const Pool& pool);
nlohmann::json pool_node_document(const PoolNode& node);

[[nodiscard]] Result<Pool> pool_from_document(const nlohmann::json& doc);
[[nodiscard]] Result<PoolNode> pool_node_from_document(const nlohmann::json& doc);

}  // namespace allot
