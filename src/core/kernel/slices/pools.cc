#include "core/kernel/slices/pools.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Pool* PoolsSlice::pool(const std::string& id) const { return find_by_id(pools, id); }

const PoolNode* PoolsSlice::pool_node(const std::string& id) const {
  return find_by_id(pool_nodes, id);
}

}  // namespace allot
