// The pools domain's rows in the store: pools, pool nodes, spot price rules.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

const DocumentCodec<Pool>& codec_of(Tag<Pool> tag);
const DocumentCodec<PoolNode>& codec_of(Tag<PoolNode> tag);
const DocumentCodec<SpotRule>& codec_of(Tag<SpotRule> tag);

}  // namespace allot
