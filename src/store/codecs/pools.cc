#include "store/codecs/pools.h"

#include "store/pool_json.h"
#include "store/spot_rule_json.h"

namespace allot {
namespace {

constexpr DocumentCodec<Pool> kPools{
    .table = "pools", .keys = "id, name", .encode = pool_document, .decode = pool_from_document};
constexpr DocumentCodec<PoolNode> kPoolNodes{.table = "pool_nodes",
                                             .keys = "id, pool_id, state",
                                             .encode = pool_node_document,
                                             .decode = pool_node_from_document,
                                             .updated = "state"};
// A deleted rule stays as a row without a curve, which loads as no rule.
constexpr DocumentCodec<SpotRule> kSpotRules{
    .table = "spot_rules",
    .keys = "key",
    .encode = spot_rule_document,
    .decode = spot_rule_from_document,
    .columns = [](const SpotRule& o) { return std::vector<DbValue>{o.key()}; },
    .conflict = "key"};

}  // namespace

const DocumentCodec<Pool>& codec_of(Tag<Pool> /*tag*/) { return kPools; }
const DocumentCodec<PoolNode>& codec_of(Tag<PoolNode> /*tag*/) { return kPoolNodes; }
const DocumentCodec<SpotRule>& codec_of(Tag<SpotRule> /*tag*/) { return kSpotRules; }

}  // namespace allot
