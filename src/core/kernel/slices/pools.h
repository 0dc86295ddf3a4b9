// The pools' part of the state: node pools, the nodes they asked for, and spot price rules.
#pragma once

#include <map>
#include <string>

#include "core/model/pool.h"
#include "core/model/spot_rule.h"

namespace allot {

struct PoolsSlice {
  std::map<std::string, Pool> pools;
  std::map<std::string, PoolNode> pool_nodes;
  std::map<std::string, SpotRule> spot_rules;  // By SpotRule::key().

  const Pool* pool(const std::string& id) const;
  const PoolNode* pool_node(const std::string& id) const;
};

}  // namespace allot
