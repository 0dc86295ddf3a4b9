#include "store/codecs/pools.h"

#include "store/pool_json.h"
#include "store/spot_rule_json.h"

namespace allot {
const DocumentCodec<Pool>& codec_of(Tag<Pool> /*tag*/) {
  static const DocumentCodec<Pool> kCodec{
      .table = "pools",
      .upsert =
          "INSERT INTO pools (id, name, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const Pool& o) { return std::vector<DbValue>{o.id, o.name}; },
      .encode = pool_document,
      .decode = pool_from_document};
  return kCodec;
}

const DocumentCodec<PoolNode>& codec_of(Tag<PoolNode> /*tag*/) {
  static const DocumentCodec<PoolNode> kCodec{
      .table = "pool_nodes",
      .upsert =
          "INSERT INTO pool_nodes (id, pool_id, state, doc) VALUES ($1, $2, $3, $4) "
          "ON CONFLICT (id) DO UPDATE SET state = excluded.state, doc = excluded.doc",
      .order = "id",
      .columns =
          [](const PoolNode& o) {
            return std::vector<DbValue>{o.id, o.pool_id,
                                        std::string(pool_node_state_name(o.state))};
          },
      .encode = pool_node_document,
      .decode = pool_node_from_document};
  return kCodec;
}

// A deleted rule stays as a row without a curve, which loads as no rule.
const DocumentCodec<SpotRule>& codec_of(Tag<SpotRule> /*tag*/) {
  static const DocumentCodec<SpotRule> kCodec{
      .table = "spot_rules",
      .upsert =
          "INSERT INTO spot_rules (key, doc) VALUES ($1, $2) "
          "ON CONFLICT (key) DO UPDATE SET doc = excluded.doc",
      .order = "key",
      .columns = [](const SpotRule& o) { return std::vector<DbValue>{o.key()}; },
      .encode = spot_rule_document,
      .decode = spot_rule_from_document};
  return kCodec;
}

}  // namespace allot
